// Baseline for `ugs rotate --yes --json`: the simplest Node script that sends the same request
// with the built-in fetch and prints the body. Token on stdin, like the ugs command it is
// measured against; base URL and API token from the same environment variables.
import { readFileSync } from 'node:fs';

const currentToken = readFileSync(0, 'utf8').trim();
const response = await fetch(`${process.env.UGS_BASE_URL}/api/user`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json',
    authorization: `Token ${process.env.UGS_API_TOKEN}`,
  },
  body: JSON.stringify({ current_token: currentToken }),
});
console.log(await response.text());
