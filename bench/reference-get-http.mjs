// For information only: the same Get User request, body included, with node:http, which (unlike
// fetch) allows a GET body. It shows what the exact request costs without any HTTP library.
import { request } from 'node:http';

const body = JSON.stringify({ name: 'Bench', user_group_id: 'bench' });
const req = request(`${process.env.UGS_BASE_URL}/api/user`, {
  method: 'GET',
  headers: {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    accept: 'application/json',
    authorization: `Token ${process.env.UGS_API_TOKEN}`,
  },
});
req.on('response', (response) => {
  let text = '';
  response.setEncoding('utf8');
  response.on('data', (chunk) => {
    text += chunk;
  });
  response.on('end', () => console.log(text));
});
req.end(body);
