/**
 * Whether a URL's host is this machine, the one test behind "plain http only on loopback"
 * (settings of URLs, the OAuth issuer, token endpoints).
 */

/** Whether `hostname` (as `URL.hostname` gives it: IPv6 in brackets) is `localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
