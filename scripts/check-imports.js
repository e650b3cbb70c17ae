// Replaced by scripts/check-layers.js (dependency-cruiser, .dependency-cruiser.cjs), which
// `npm run check` runs; kept only because the CHANGELOG's earlier entries name this file.
import "./check-layers.js";
