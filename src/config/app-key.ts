/**
 * The App's private key as the environment holds it, without the double quotes around it that
 * `docker run --env-file` keeps. Probot's manifest flow writes `.env` as
 * `PRIVATE_KEY="-----BEGIN RSA PRIVATE KEY-----\n…"`; dotenv (`npm start`) removes the quotes,
 * Docker does not, and Probot then cannot read the key.
 */
export function unquotedPrivateKey(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed && trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : value;
}
