/** `.github/lisa.yml` cannot be used; the message names the key and the problem. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A git operation failed; the message says which and on what repository. */
export class GitError extends Error {
  override name = "GitError";
}

/** A step cannot go on; the message is written for the person reading the issue. */
export class StepError extends Error {
  override name = "StepError";
}

/** Lisa's sandbox for agents and gate commands cannot start; the message says how to fix the host. */
export class SandboxError extends StepError {
  override name = "SandboxError";
}

/** Lisa refused to push commits that hold a secret; the message says where and what kind, never the value. */
export class SecretInPushError extends StepError {
  override name = "SecretInPushError";
}
