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
} from './protocol';

export abstract class LiveAgentd {
  /** The client now, or an AgentdError (NOT_RUNNING) for method saying why there is none. */
  protected abstract live(method: string): AgentdClient;

  async spawn(p: SpawnParams): Promise<Session> {
    return this.live('session/spawn').spawn(p);
  }
  async list(): Promise<Session[]> {
    return this.live('session/list').list();
  }
  async read(sessionId: string): Promise<ReadResult> {
    return this.live('session/read').read(sessionId);
  }
  async resize(p: ResizeParams): Promise<void> {
    return this.live('session/resize').resize(p);
  }
  async input(p: InputParams): Promise<void> {
    return this.live('session/input').input(p);
  }
  async watchOutput(sessionId: string, listener: (n: OutputNotification) => void): Promise<{ dispose(): void }> {
    return this.live('session/subscribe').watchOutput(sessionId, listener);
  }
  async seen(sessionId: string): Promise<void> {
    return this.live('session/seen').seen(sessionId);
  }
  async kill(p: KillParams): Promise<void> {
    return this.live('session/kill').kill(p);
  }
  async classify(sessionId: string): Promise<ClassifyResult> {
    return this.live('session/classify').classify(sessionId);
  }
  async send(p: SendParams): Promise<void> {
    return this.live('runtime_send').send(p);
  }
  async answer(p: AnswerParams): Promise<AnswerResult> {
    return this.live('runtime_answer').answer(p);
  }
}
