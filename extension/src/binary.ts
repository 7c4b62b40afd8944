// Finding the oh-bridge binary: the setting, then the binary shipped in
// the extension, then PATH. Pure, so it is tested without VS Code.
//
// The extension's package for linux-x64, linux-arm64, darwin-x64 or
// darwin-arm64 carries that platform's bridge in bin/<platform>-<arch>/
// (`task packages`); the universal package, which VS Code installs on every
// other platform, carries none, and the bridge is found on PATH.
import * as path from 'node:path';

/** How to install the bridge where no package carries it: its module path is go.mod's. */
export const installCommand = 'go install github.com/oh-bridge/oh-bridge/cmd/oh-bridge@latest';

export interface BinaryLookup {
  /** openhands.bridge.path; empty when unset. */
  settingPath: string;
  extensionPath: string;
  platform: string;
  arch: string;
  /** The PATH environment variable. */
  pathEnv: string;
  isExecutable: (file: string) => boolean;
}

export type BinaryResult =
  | { path: string; source: 'setting' | 'bundled' | 'PATH' }
  | { error: string };

function exeName(platform: string): string {
  return platform === 'win32' ? 'oh-bridge.exe' : 'oh-bridge';
}

export function bundledPath(extensionPath: string, platform: string, arch: string): string {
  return path.join(extensionPath, 'bin', `${platform}-${arch}`, exeName(platform));
}

export function findBridge(o: BinaryLookup): BinaryResult {
  if (o.settingPath !== '') {
    // An explicit setting wins; a wrong one is an error, not a fall-through,
    // so the user is not silently given another binary.
    if (o.isExecutable(o.settingPath)) {
      return { path: o.settingPath, source: 'setting' };
    }
    return {
      error: `openhands.bridge.path is set to ${o.settingPath}, but there is no executable file there. Fix the setting, or clear it to use the bridge bundled with the extension or found on PATH.`,
    };
  }
  const bundled = bundledPath(o.extensionPath, o.platform, o.arch);
  if (o.isExecutable(bundled)) {
    return { path: bundled, source: 'bundled' };
  }
  const exe = exeName(o.platform);
  const sep = o.platform === 'win32' ? ';' : ':';
  for (const dir of o.pathEnv.split(sep)) {
    if (dir === '') continue;
    const candidate = path.join(dir, exe);
    if (o.isExecutable(candidate)) {
      return { path: candidate, source: 'PATH' };
    }
  }
  return { error: notFound(o.platform, o.arch) };
}

/** What to do when no bridge is found: name what is missing, then the fix. */
function notFound(platform: string, arch: string): string {
  const lines = [
    `The oh-bridge binary was not found: this copy of the extension carries no bridge for ${platform}-${arch}, and there is no ${exeName(platform)} on PATH.`,
    `Install it with \`${installCommand}\` (Go 1.26 or newer), which puts it in $(go env GOPATH)/bin (by default ~/go/bin); then add that directory to the PATH VS Code starts with, or set openhands.bridge.path to the binary.`,
  ];
  if (platform === 'win32') {
    lines.push('On Windows the bridge serves files and edits; its terminals are not supported yet.');
  }
  return lines.join(' ');
}
