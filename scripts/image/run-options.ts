/**
 * The `docker run` options the image needs for its agent sandbox (docs/deployment.md gives them,
 * and docker/compose.yml's `security_opt`): no seccomp or AppArmor filter refusing the namespaces
 * bubblewrap makes, and /proc unmasked so it can mount a fresh one.
 */
export const DOCKER_SECURITY_OPTIONS = ["seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"];

/** The same options as podman spells them: it names Docker's `systempaths=unconfined` `unmask=ALL`. */
export function podmanSecurityOptions(options: string[]): string[] {
  return options.flatMap((option) => ["--security-opt", option === "systempaths=unconfined" ? "unmask=ALL" : option]);
}
