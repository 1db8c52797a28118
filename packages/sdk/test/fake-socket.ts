/**
 * A scripted WebSocket for deterministic RealtimeClient tests: every instance is recorded in
 * `FakeSocket.all`, records what the client sends, and is driven by the test as the service
 * (`accept`, `auth`, `frame`, `drop`).
 */
import type { WebSocketLike } from '../src/realtime/types.js';

export class FakeSocket implements WebSocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: Array<{ event: string; data: any }> = [];
  closedWith: number | undefined;
  onopen: ((e: unknown) => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(data: string): void {
    if (this.readyState !== 1) throw new Error('not open');
    this.sent.push(JSON.parse(data));
  }
  close(code?: number): void {
    this.closedWith = code;
    this.readyState = 3;
  }
  // --- the scripted service
  accept(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  frame(event: string, data: unknown): void {
    this.onmessage?.({ data: JSON.stringify({ event, data }) });
  }
  /** Accept and authenticate (answer the client's ping). */
  auth(): void {
    this.accept();
    this.frame('pong', {});
  }
  drop(code = 1006, reason = ''): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
  lastMessage() {
    return this.sent.filter((f) => f.event === 'message').at(-1)!;
  }
}
