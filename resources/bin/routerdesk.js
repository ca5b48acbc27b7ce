#!/usr/bin/env node
// The package bin: runs the built router CLI (npm run build makes out/main/cli.js).
import '../../out/main/cli.js';
