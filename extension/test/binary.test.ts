// Unit tests of the bridge's lookup (binary.ts) as each package meets it:
// a platform's package finds its own bundled bridge, the universal package
// (no bin/) finds one on PATH, and when there is none the message names
// what is missing and the fix.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundledPath, findBridge, installCommand, type BinaryLookup, type BinaryResult } from '../src/binary';

const repo = path.resolve(__dirname, '..', '..');

function lookup(over: Partial<BinaryLookup>, executables: string[]): BinaryLookup {
  return {
    settingPath: '',
    extensionPath: '/ext',
    platform: 'linux',
    arch: 'arm64',
    pathEnv: '/usr/local/bin:/usr/bin',
    isExecutable: (f) => executables.includes(f),
    ...over,
  };
}

function errorOf(r: BinaryResult): string {
  assert.ok('error' in r, `want an error, got ${JSON.stringify(r)}`);
  return r.error;
}

void test('binary lookup: each platform package finds its own bridge in bin/<platform>-<arch>/', () => {
  // The Taskfile's TARGETS are VS Code's names, which are Node's
  // process.platform and process.arch joined: the layout bundledPath reads.
  const taskfile = fs.readFileSync(path.join(repo, 'Taskfile.yml'), 'utf8');
  const targets = /^ {2}TARGETS: (.+)$/m.exec(taskfile)?.[1]?.split(/\s+/) ?? [];
  assert.deepEqual(targets, ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64']);
  for (const target of targets) {
    const [platform = '', arch = ''] = target.split('-');
    const bundled = bundledPath('/ext', platform, arch);
    assert.equal(bundled, `/ext/bin/${target}/oh-bridge`);
    // Another platform's binary is never taken, even if it were there.
    const others = targets.filter((t) => t !== target).map((t) => `/ext/bin/${t}/oh-bridge`);
    assert.deepEqual(findBridge(lookup({ platform, arch }, [...others, bundled, '/usr/bin/oh-bridge'])), { path: bundled, source: 'bundled' }, target);
  }
});

void test('binary lookup: the universal package finds the bridge on PATH, in PATH order', () => {
  const cases: { name: string; over: Partial<BinaryLookup>; executables: string[]; want: BinaryResult }[] = [
    { name: 'first PATH entry that has it', over: { platform: 'linux', arch: 'arm' }, executables: ['/usr/bin/oh-bridge', '/usr/local/bin/oh-bridge'], want: { path: '/usr/local/bin/oh-bridge', source: 'PATH' } },
    { name: 'a later entry', over: { platform: 'linux', arch: 'arm' }, executables: ['/usr/bin/oh-bridge'], want: { path: '/usr/bin/oh-bridge', source: 'PATH' } },
    { name: 'empty PATH entries are skipped', over: { pathEnv: '::/opt/oh/bin:' }, executables: ['oh-bridge', '/opt/oh/bin/oh-bridge'], want: { path: '/opt/oh/bin/oh-bridge', source: 'PATH' } },
    { name: 'alpine (musl) has no package of its own', over: { platform: 'linux', arch: 'x64', extensionPath: '/universal' }, executables: ['/usr/bin/oh-bridge'], want: { path: '/usr/bin/oh-bridge', source: 'PATH' } },
    { name: 'Windows: oh-bridge.exe, PATH split on ;', over: { platform: 'win32', arch: 'x64', pathEnv: 'C:\\Windows;C:\\Users\\me\\go\\bin' }, executables: [path.join('C:\\Users\\me\\go\\bin', 'oh-bridge.exe')], want: { path: path.join('C:\\Users\\me\\go\\bin', 'oh-bridge.exe'), source: 'PATH' } },
    { name: 'the setting wins over PATH', over: { settingPath: '/home/me/oh-bridge' }, executables: ['/home/me/oh-bridge', '/usr/bin/oh-bridge'], want: { path: '/home/me/oh-bridge', source: 'setting' } },
  ];
  for (const c of cases) {
    assert.deepEqual(findBridge(lookup(c.over, c.executables)), c.want, c.name);
  }
});

void test('binary lookup: a wrong setting is an error, never a fall-through to another bridge', () => {
  const bundled = bundledPath('/ext', 'linux', 'arm64');
  const msg = errorOf(findBridge(lookup({ settingPath: '/nope/oh-bridge' }, [bundled, '/usr/bin/oh-bridge'])));
  assert.match(msg, /openhands\.bridge\.path is set to \/nope\/oh-bridge, but there is no executable file there/);
  assert.match(msg, /clear it/);
});

void test('binary lookup: with no bridge anywhere, the message names the platform, what is missing and the fix', () => {
  const msg = errorOf(findBridge(lookup({ platform: 'linux', arch: 'riscv64' }, [])));
  assert.match(msg, /carries no bridge for linux-riscv64/);
  assert.match(msg, /no oh-bridge on PATH/);
  assert.ok(msg.includes(installCommand), msg);
  assert.match(msg, /openhands\.bridge\.path/);
  assert.doesNotMatch(msg, /Windows/);

  const win = errorOf(findBridge(lookup({ platform: 'win32', arch: 'arm64', pathEnv: 'C:\\Windows' }, [])));
  assert.match(win, /carries no bridge for win32-arm64/);
  assert.match(win, /no oh-bridge\.exe on PATH/);
  assert.match(win, /On Windows the bridge serves files and edits; its terminals are not supported yet\./);
});

void test('binary lookup: the install command names the module in go.mod and its command', () => {
  const module = /^module (\S+)$/m.exec(fs.readFileSync(path.join(repo, 'go.mod'), 'utf8'))?.[1];
  assert.ok(module !== undefined, 'go.mod has no module line');
  assert.equal(installCommand, `go install ${module}/cmd/oh-bridge@latest`);
  assert.ok(fs.statSync(path.join(repo, 'cmd', 'oh-bridge')).isDirectory());
});
