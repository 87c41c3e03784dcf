// Baseline for `ugs get --json`: the simplest Node script that does the Get User request with the
// built-in fetch and prints the body. fetch refuses a body on GET ("Request with GET/HEAD method
// cannot have body"), so this one sends the same URL and headers without it; everything a Node
// process pays for (start, fetch machinery, one round trip, output) is the same.
const response = await fetch(`${process.env.UGS_BASE_URL}/api/user`, {
  method: 'GET',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json',
    authorization: `Token ${process.env.UGS_API_TOKEN}`,
  },
});
console.log(await response.text());
