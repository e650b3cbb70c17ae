// A checkpoint of a working directory outside any git repository (issue 43): a content-addressed
// copy under warren's home. Each file's bytes are kept once by their SHA-256
// (`checkpoints/objects/ab/abcd…`); a manifest (itself an object) lists every path with its
// object and mode, and symlinks with their target. Its key is what the checkpoint row keeps.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { warrenHome } from "../paths.js";

type Env = Record<string, string | undefined>;

/** A directory larger than this is not copied: a checkpoint is for a project, not a home. */
export const STORE_MAX_FILES = 2_000;

/**
 * A directory outside git with more files than the store copies (a home directory, /tmp): no
 * checkpoint is taken there, said once (runtime/checkpoint-turn.ts).
 */
export class TooManyFiles extends Error {}

interface Manifest {
  files: { p: string; h: string; m: number }[];
  links: { p: string; t: string }[];
}

const storeRoot = (env: Env) => path.join(warrenHome(env), "checkpoints");
const objectPath = (root: string, hash: string) =>
  path.join(root, "objects", hash.slice(0, 2), hash);

const sha = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

/** Writes an object once (a temporary name, then a rename: a crash leaves no half object). */
function putObject(root: string, data: Buffer | string): string {
  const hash = sha(data);
  const file = objectPath(root, hash);
  if (fs.existsSync(file)) return hash;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return hash;
}

interface Entry {
  rel: string;
  abs: string;
  stat: fs.Stats;
}

/** Every file and symlink below `dir` (no `.git`, no symlink followed), large files apart. */
function walk(dir: string, maxFileBytes: number): { entries: Entry[]; skipped: string[] } {
  const entries: Entry[] = [];
  const skipped: string[] = [];
  const visit = (rel: string) => {
    const abs = rel ? path.join(dir, rel) : dir;
    for (const d of fs.readdirSync(abs, { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${d.name}` : d.name;
      const childAbs = path.join(abs, d.name);
      if (d.isDirectory()) {
        if (d.name !== ".git") visit(childRel);
        continue;
      }
      if (!d.isFile() && !d.isSymbolicLink()) continue;
      const stat = fs.lstatSync(childAbs);
      if (stat.isFile() && stat.size > maxFileBytes) {
        skipped.push(childRel);
        continue;
      }
      entries.push({ rel: childRel, abs: childAbs, stat });
      if (entries.length > STORE_MAX_FILES) {
        throw new TooManyFiles(
          `${dir} holds more than ${STORE_MAX_FILES} files outside a git repository: no checkpoints there`,
        );
      }
    }
  };
  visit("");
  return { entries, skipped };
}

/** Copies `dir` into the store; returns the manifest's key and the files left out for size. */
export function storeSnapshot(
  dir: string,
  maxFileBytes: number,
  env: Env = process.env,
): { key: string; skipped: string[]; paths: Map<string, string> } {
  const root = storeRoot(env);
  const { entries, skipped } = walk(dir, maxFileBytes);
  const manifest: Manifest = { files: [], links: [] };
  const paths = new Map<string, string>();
  for (const e of entries) {
    if (e.stat.isSymbolicLink()) {
      const t = fs.readlinkSync(e.abs);
      manifest.links.push({ p: e.rel, t });
      paths.set(e.rel, `link:${t}`);
    } else {
      const h = putObject(root, fs.readFileSync(e.abs));
      manifest.files.push({ p: e.rel, h, m: e.stat.mode & 0o777 });
      paths.set(e.rel, `${h}:${e.stat.mode & 0o777}`);
    }
  }
  manifest.files.sort((a, b) => (a.p < b.p ? -1 : 1));
  manifest.links.sort((a, b) => (a.p < b.p ? -1 : 1));
  return { key: putObject(root, JSON.stringify(manifest)), skipped, paths };
}

function readManifest(key: string, env: Env): Manifest {
  const file = objectPath(storeRoot(env), key);
  if (!/^[0-9a-f]{64}$/.test(key) || !fs.existsSync(file)) {
    throw new Error(`the checkpoint ${key.slice(0, 12)} is no longer in ${storeRoot(env)}`);
  }
  return JSON.parse(fs.readFileSync(file, "utf8")) as Manifest;
}

/** The paths of a stored checkpoint, as storeSnapshot's `paths` (for what a turn changed). */
export function storedPaths(key: string, env: Env = process.env): Map<string, string> {
  const m = readManifest(key, env);
  const out = new Map<string, string>();
  for (const f of m.files) out.set(f.p, `${f.h}:${f.m}`);
  for (const l of m.links) out.set(l.p, `link:${l.t}`);
  return out;
}

/** A relative path a manifest may name: no absolute path, no `..`, no empty part. */
function safeRel(p: string): boolean {
  return !path.isAbsolute(p) && p.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

/** Whether a directory on the way to `rel` below `dir` is a symlink (never written through). */
function throughLink(dir: string, rel: string): boolean {
  let at = dir;
  for (const part of rel.split("/").slice(0, -1)) {
    at = path.join(at, part);
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) return true;
  }
  return false;
}

/**
 * Puts `dir` back to the stored checkpoint `key`: as restoreTree does in a repository (files
 * created since removed, changed and deleted ones written back, large files left alone).
 * Idempotent.
 */
export function storeRestore(
  dir: string,
  key: string,
  maxFileBytes: number,
  env: Env = process.env,
): { written: string[]; removed: string[] } {
  const root = storeRoot(env);
  const want = storedPaths(key, env);
  const manifest = readManifest(key, env);
  const { entries } = walk(dir, maxFileBytes);
  const written: string[] = [];
  const removed: string[] = [];
  const have = new Map<string, Entry>(entries.map((e) => [e.rel, e]));
  for (const e of entries) {
    if (!want.has(e.rel)) {
      fs.rmSync(e.abs, { force: true });
      removed.push(e.rel);
    }
  }
  const same = (e: Entry | undefined, value: string) => {
    if (!e) return false;
    if (e.stat.isSymbolicLink()) return value === `link:${fs.readlinkSync(e.abs)}`;
    return value === `${sha(fs.readFileSync(e.abs))}:${e.stat.mode & 0o777}`;
  };
  for (const f of manifest.files) {
    if (!safeRel(f.p) || throughLink(dir, f.p) || same(have.get(f.p), `${f.h}:${f.m}`)) continue;
    const target = path.join(dir, f.p);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.rmSync(target, { force: true, recursive: true });
    const tmp = `${target}.warren-restore`;
    fs.copyFileSync(objectPath(root, f.h), tmp);
    fs.chmodSync(tmp, f.m);
    fs.renameSync(tmp, target);
    written.push(f.p);
  }
  for (const l of manifest.links) {
    if (!safeRel(l.p) || throughLink(dir, l.p) || same(have.get(l.p), `link:${l.t}`)) continue;
    const target = path.join(dir, l.p);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.rmSync(target, { force: true, recursive: true });
    fs.symlinkSync(l.t, target);
    written.push(l.p);
  }
  return { written, removed };
}
