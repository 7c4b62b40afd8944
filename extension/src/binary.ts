// Finding the oh-bridge binary: the setting, then the binary shipped in
// the extension, then PATH. Pure, so it is tested without VS Code.
import * as path from 'node:path';

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
      error: `openhands.bridge.path is set to ${o.settingPath}, but there is no executable file there. Fix the setting, or clear it to use the bundled bridge.`,
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
  return {
    error: `The oh-bridge binary was not found: none is bundled for ${o.platform}-${o.arch} and none is on PATH. Install it (go install github.com/oh-bridge/oh-bridge/cmd/oh-bridge@latest) or set openhands.bridge.path.`,
  };
}
