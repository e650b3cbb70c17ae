// A point where a test holds work open: the work says it got there (`reached`) and waits for
// `released`; the test waits for `atPoint`, looks around, then calls `release`.
export interface Hold {
  reached: () => void;
  atPoint: Promise<void>;
  release: () => void;
  released: Promise<void>;
}

export function hold(): Hold {
  let reached!: () => void;
  const atPoint = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { reached, atPoint, release, released };
}
