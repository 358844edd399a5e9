// The calls a connection that may be down hands to its live client: the
// Supervisor (this machine's agentd) and a HostConnection (another
// host's) differ only in how they keep that client, and in live(), which
// names why there is none.
import { AgentdClient } from './client';
import {
  AnswerParams,
  AnswerResult,
  ClassifyResult,
  InputParams,
  KillParams,
  OutputNotification,
  ReadResult,
  ResizeParams,
  SendParams,
  Session,
  SpawnParams,
  Methods,
} from './protocol';

export abstract class LiveAgentd {
  /** The client now, or an AgentdError (NOT_RUNNING) for method saying why there is none. */
  protected abstract live(method: string): AgentdClient;

  async spawn(p: SpawnParams): Promise<Session> {
    return this.live(Methods.spawn).spawn(p);
  }
  async list(): Promise<Session[]> {
    return this.live(Methods.list).list();
  }
  async read(sessionId: string): Promise<ReadResult> {
    return this.live(Methods.read).read(sessionId);
  }
  async resize(p: ResizeParams): Promise<void> {
    return this.live(Methods.resize).resize(p);
  }
  async input(p: InputParams): Promise<void> {
    return this.live(Methods.input).input(p);
  }
  async watchOutput(sessionId: string, listener: (n: OutputNotification) => void): Promise<{ dispose(): void }> {
    return this.live(Methods.subscribe).watchOutput(sessionId, listener);
  }
  async seen(sessionId: string): Promise<void> {
    return this.live(Methods.seen).seen(sessionId);
  }
  async kill(p: KillParams): Promise<void> {
    return this.live(Methods.kill).kill(p);
  }
  async classify(sessionId: string): Promise<ClassifyResult> {
    return this.live(Methods.classify).classify(sessionId);
  }
  async send(p: SendParams): Promise<void> {
    return this.live(Methods.send).send(p);
  }
  async answer(p: AnswerParams): Promise<AnswerResult> {
    return this.live(Methods.answer).answer(p);
  }
}
