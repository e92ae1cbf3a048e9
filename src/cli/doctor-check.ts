/** One thing doctor looked at: `message` says what it found and, when not ok, how to fix it. */
export interface Check {
  name: string;
  ok: boolean;
  message: string;
}
