// Tells agentd whether the person is looking at this window (client/focus)
// and what agentd.desktopNotifications says: agentd raises a desktop notice
// only while no client is focused, and none at all while a connected
// client's setting is off. Free of `vscode`, so the tests drive it.
import { FocusParams } from './protocol';

export interface FocusSink {
  focus(p: FocusParams): Promise<void>;
}

export class FocusReporter {
  /** What agentd was last told on this connection; undefined: nothing yet. */
  private sent: string | undefined;

  constructor(
    private readonly sink: FocusSink,
    private focused: boolean,
    private desktop: boolean,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** The window gained or lost the focus. */
  setFocused(focused: boolean): void {
    this.focused = focused;
    this.send();
  }

  /** agentd.desktopNotifications changed. */
  setDesktop(desktop: boolean): void {
    this.desktop = desktop;
    this.send();
  }

  /** A new connection knows nothing of this window yet: tell it. */
  connected(): void {
    this.sent = undefined;
    this.send();
  }

  private send(): void {
    const p: FocusParams = { focused: this.focused, desktopNotifications: this.desktop };
    const key = JSON.stringify(p);
    if (key === this.sent) return;
    this.sent = key;
    this.sink.focus(p).catch((e: Error) => {
      this.sent = undefined; // say it again with the next change or connection
      this.log(`[client] client/focus: ${e.message}`);
    });
  }
}
