// A fake `vscode` module, injected through Module._load before any module of
// the extension is loaded (import this file first). It records what the
// extension shows and lets a test decide what the person clicks.
import Module = require('module');

type Listener<T> = (e: T) => unknown;

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (l: Listener<T>) => {
    this.listeners.add(l);
    return { dispose: () => this.listeners.delete(l) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}

export class MarkdownString {
  supportThemeIcons = false;
  constructor(
    public value = '',
    public isTrusted = false,
  ) {}
  appendMarkdown(s: string): this {
    this.value += s;
    return this;
  }
  appendText(s: string): this {
    this.value += s;
    return this;
  }
  appendCodeblock(s: string, lang = ''): this {
    this.value += `\n\`\`\`${lang}\n${s}\n\`\`\`\n`;
    return this;
  }
}

/** Enough of vscode.Uri for virtual documents: scheme and path, printed as scheme:path. */
export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static from(c: { scheme: string; path?: string }): Uri {
    return new Uri(c.scheme, c.path ?? '');
  }
  toString(): string {
    return `${this.scheme}:${encodeURI(this.path)}`;
  }
}

/** A text document opened from a content provider. */
export interface FakeDocument {
  uri: Uri;
  getText(): string;
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class TreeItem {
  id?: string;
  description?: string;
  iconPath?: ThemeIcon;
  contextValue?: string;
  tooltip?: unknown;
  command?: { command: string; title: string; arguments?: unknown[] };
  accessibilityInformation?: { label: string };
  constructor(
    public label: string,
    public collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export interface Shown {
  severity: 'info' | 'warning' | 'error';
  message: string;
  items: Array<string | { title: string }>;
}

export class FakeStatusBarItem {
  text = '';
  tooltip: unknown;
  color: unknown;
  backgroundColor: ThemeColor | undefined;
  command: unknown;
  name = '';
  accessibilityInformation: unknown;
  visible = false;
  constructor(
    readonly id: string,
    readonly alignment: StatusBarAlignment,
    readonly priority: number,
  ) {}
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.visible = false;
  }
}

export class FakeQuickPick<T extends { label: string }> {
  title = '';
  placeholder = '';
  buttons: Array<{ tooltip?: string; iconPath?: ThemeIcon }> = [];
  private buttonE = new EventEmitter<{ tooltip?: string }>();
  onDidTriggerButton = this.buttonE.event;
  /** The person clicks the title button whose tooltip starts with `tooltip`. */
  trigger(tooltip: string): void {
    const b = this.buttons.find((x) => x.tooltip?.startsWith(tooltip));
    if (!b) throw new Error(`no button "${tooltip}" in ${this.buttons.map((x) => x.tooltip).join(' | ')}`);
    this.buttonE.fire(b);
  }
  ignoreFocusOut = false;
  matchOnDescription = false;
  items: T[] = [];
  activeItems: T[] = [];
  selectedItems: T[] = [];
  value = '';
  shown = false;
  private accept = new EventEmitter<void>();
  private hideE = new EventEmitter<void>();
  private valueE = new EventEmitter<string>();
  onDidAccept = this.accept.event;
  onDidHide = this.hideE.event;
  onDidChangeValue = this.valueE.event;
  show(): void {
    this.shown = true;
    fake.quickPicks.push(this as unknown as FakeQuickPick<{ label: string }>);
    fake.onQuickPick(this as unknown as FakeQuickPick<{ label: string }>);
  }
  hide(): void {
    if (!this.shown) return;
    this.shown = false;
    this.hideE.fire();
  }
  dispose(): void {}
  /** The person picks the item whose label contains `label`. */
  pick(label: string): void {
    const it = this.items.find((i) => i.label.includes(label));
    if (!it) throw new Error(`no item "${label}" in ${this.items.map((i) => i.label).join(' | ')}`);
    this.selectedItems = [it];
    this.accept.fire();
  }
  /** The person types into the box. */
  type(v: string): void {
    this.value = v;
    this.valueE.fire(v);
  }
}

export class FakeTerminal {
  shown = 0;
  constructor(readonly options: { name: string; pty: unknown; iconPath?: ThemeIcon }) {}
  show(): void {
    this.shown++;
  }
  dispose(): void {}
}

/** What the extension showed, and how the "person" answers. */
export const fake = {
  shown: [] as Shown[],
  statusMessages: [] as string[],
  statusBarItems: [] as FakeStatusBarItem[],
  quickPicks: [] as FakeQuickPick<{ label: string }>[],
  terminals: [] as FakeTerminal[],
  commandsRun: [] as Array<{ id: string; args: unknown[] }>,
  config: {} as Record<string, unknown>,
  /** registerTextDocumentContentProvider's providers, by scheme. */
  providers: new Map<string, { provideTextDocumentContent(uri: Uri): string }>(),
  /** Documents shown with showTextDocument. */
  documents: [] as Array<{ doc: FakeDocument; options: unknown }>,
  /** Chooses the button of a message; default: none (dismissed). */
  onMessage: (_m: Shown): string | undefined => undefined,
  /** Called when a QuickPick opens; the test picks in it. */
  onQuickPick: (_qp: FakeQuickPick<{ label: string }>) => undefined as unknown,
  /** Answers showQuickPick(items): default the first. */
  onShowQuickPick: <T>(items: T[]): T | undefined => items[0],
  reset(): void {
    this.shown = [];
    this.statusMessages = [];
    this.statusBarItems = [];
    this.quickPicks = [];
    this.terminals = [];
    this.commandsRun = [];
    this.config = {};
    this.documents = [];
    this.onMessage = () => undefined;
    this.onQuickPick = () => undefined;
    this.onShowQuickPick = (items) => items[0];
  },
};

function message(severity: Shown['severity']) {
  return async (msg: string, ...items: Array<string | { title: string }>) => {
    const m = { severity, message: msg, items };
    fake.shown.push(m);
    const title = fake.onMessage(m);
    return title === undefined ? undefined : items.find((i) => (typeof i === 'string' ? i : i.title) === title);
  };
}

const activeTerminalChanged = new EventEmitter<unknown>();
const windowStateChanged = new EventEmitter<{ focused: boolean }>();

export const vscode = {
  version: '1.90.0-fake',
  EventEmitter,
  Uri,
  ThemeColor,
  ThemeIcon,
  MarkdownString,
  TreeItem,
  TreeItemCollapsibleState,
  StatusBarAlignment,
  Disposable: class {
    constructor(private readonly fn: () => void) {}
    dispose() {
      this.fn();
    }
  },
  window: {
    state: { focused: true },
    activeTerminal: undefined as unknown,
    activeTextEditor: undefined as unknown,
    showInformationMessage: message('info'),
    showWarningMessage: message('warning'),
    showErrorMessage: message('error'),
    setStatusBarMessage: (text: string) => {
      fake.statusMessages.push(text);
      return { dispose() {} };
    },
    createStatusBarItem: (id: string, alignment: StatusBarAlignment, priority: number) => {
      const item = new FakeStatusBarItem(id, alignment, priority);
      fake.statusBarItems.push(item);
      return item;
    },
    createQuickPick: () => new FakeQuickPick(),
    showQuickPick: async <T>(items: T[]) => fake.onShowQuickPick(items),
    showInputBox: async () => undefined,
    showTextDocument: async (doc: FakeDocument, options: unknown) => {
      fake.documents.push({ doc, options });
      return {};
    },
    createOutputChannel: () => ({ appendLine() {}, append() {}, show() {}, dispose() {} }),
    createTerminal: (options: FakeTerminal['options']) => {
      const t = new FakeTerminal(options);
      fake.terminals.push(t);
      return t;
    },
    createTreeView: () => ({ visible: false, badge: undefined, onDidChangeVisibility: () => ({ dispose() {} }), dispose() {} }),
    onDidCloseTerminal: () => ({ dispose() {} }),
    onDidChangeActiveTerminal: activeTerminalChanged.event,
    onDidChangeWindowState: windowStateChanged.event,
  },
  commands: {
    registerCommand: () => ({ dispose() {} }),
    executeCommand: async (id: string, ...args: unknown[]) => {
      fake.commandsRun.push({ id, args });
    },
  },
  workspace: {
    workspaceFolders: undefined,
    getConfiguration: () => ({ get: (k: string) => fake.config[k] }),
    onDidChangeConfiguration: () => ({ dispose() {} }),
    registerTextDocumentContentProvider: (scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) => {
      fake.providers.set(scheme, provider);
      return { dispose: () => fake.providers.delete(scheme) };
    },
    openTextDocument: async (uri: Uri): Promise<FakeDocument> => {
      const provider = fake.providers.get(uri.scheme);
      if (!provider) throw new Error(`no content provider for ${uri.scheme}`);
      return { uri, getText: () => provider.provideTextDocumentContent(uri) };
    },
  },
  /** Test hook: the window gains or loses the focus. */
  _setWindowFocus(focused: boolean): void {
    vscode.window.state.focused = focused;
    windowStateChanged.fire({ focused });
  },
  /** Test hook: the person focuses a terminal. */
  _focusTerminal(t: unknown): void {
    vscode.window.activeTerminal = t;
    activeTerminalChanged.fire(t);
  },
};

const M = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };
const load = M._load;
M._load = function (request: string, parent: unknown, isMain: boolean) {
  if (request === 'vscode') return vscode;
  return load.call(this, request, parent, isMain);
};
