// package.json is what VS Code reads: its commands, menus, settings and pins
// must match the code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '..', '..', '..');
const read = (p: string) => fs.readFileSync(path.join(root, p), 'utf8');
const pkg = JSON.parse(read('package.json'));
const src = fs
  .readdirSync(path.join(root, 'src'))
  .map((f) => read(path.join('src', f)))
  .join('\n');

// Commands VS Code makes by itself: a view's focus command.
const builtin = new Set(['agentd.sessions.focus']);

test('every contributed command is registered, and every registered or referenced command is contributed', () => {
  const contributed = new Set<string>(pkg.contributes.commands.map((c: { command: string }) => c.command));
  const registered = new Set([...read('src/commands.ts').matchAll(/reg\('(agentd\.[\w.]+)'/g)].map((m) => m[1]));
  assert.deepEqual([...contributed].sort(), [...registered].sort());
  const referenced = new Set([...src.matchAll(/(?:command: |executeCommand\()'(agentd\.[\w.]+)'/g)].map((m) => m[1]));
  for (const menu of Object.values(pkg.contributes.menus) as Array<Array<{ command: string }>>) for (const m of menu) referenced.add(m.command);
  for (const c of referenced) assert.ok(contributed.has(c) || builtin.has(c), `${c} is used but not contributed`);
  for (const c of pkg.contributes.commands) assert.equal(c.category, 'agentd', `${c.command} shows as "agentd: …"`);
});

test('every setting the code reads is contributed, and the ones that run programs are restricted in untrusted workspaces', () => {
  const props = pkg.contributes.configuration.properties;
  const read_ = [...read('src/config.ts').matchAll(/(?:get<[^>]+>|strings)\('([\w.]+)'/g)].map((m) => `agentd.${m[1]}`);
  assert.ok(read_.length >= 10, read_.join(' '));
  for (const k of read_) assert.ok(props[k], `${k} is read but not contributed`);
  for (const k of Object.keys(props)) assert.ok(read_.includes(k), `${k} is contributed but never read`);
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const k of Object.keys(props).filter((k) => k === 'agentd.path' || k.startsWith('agentd.agents.'))) assert.ok(restricted.includes(k), k);
  assert.equal(props['agentd.path'].scope, 'machine');
});

test('the view, its container and the activation are declared', () => {
  assert.deepEqual(pkg.activationEvents, ['onStartupFinished']);
  assert.equal(pkg.main, './dist/extension.js');
  assert.equal(pkg.contributes.viewsContainers.activitybar[0].id, 'agentd');
  assert.equal(pkg.contributes.views.agentd[0].id, 'agentd.sessions');
  assert.ok(fs.existsSync(path.join(root, pkg.contributes.viewsContainers.activitybar[0].icon)));
  assert.ok(src.includes("createTreeView('agentd.sessions'"));
});

test('every npm dependency is pinned exactly, and @types/vscode is no newer than engines.vscode', () => {
  for (const file of ['package.json', 'test/e2e/tools/package.json']) {
    const p = JSON.parse(read(file));
    for (const [name, v] of Object.entries({ ...p.dependencies, ...p.devDependencies }) as Array<[string, string]>) {
      assert.match(v, /^\d+\.\d+\.\d+$/, `${file}: ${name}@${v} is not an exact version`);
    }
    assert.ok(fs.existsSync(path.join(root, path.dirname(file), 'package-lock.json')), `${file} has a lock file`);
  }
  const engine = pkg.engines.vscode.replace(/^\^/, '').split('.').map(Number);
  const types = pkg.devDependencies['@types/vscode'].split('.').map(Number);
  assert.ok(types[0] < engine[0] || (types[0] === engine[0] && types[1] <= engine[1]), `@types/vscode ${types} > engines ${engine}`);
});
