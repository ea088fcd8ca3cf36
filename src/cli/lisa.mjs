#!/usr/bin/env -S node --disable-warning=ExperimentalWarning
// `lisa` (npx lisa, and the command on the image's PATH): plain JavaScript, so that an older Node.js
// says which version Lisa needs instead of failing on the `.ts` file every command starts from.
const NEEDED = [22, 18];
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < NEEDED[0] || (major === NEEDED[0] && minor < NEEDED[1])) {
  process.stderr.write(
    `lisa needs Node.js ${NEEDED.join(".")} or newer, which runs TypeScript without flags; this is ${process.versions.node}.\n` +
      "Install the current LTS from nodejs.org, or run `nvm install` in Lisa's checkout (.nvmrc).\n",
  );
  process.exit(1);
}
await import("./lisa.ts");
