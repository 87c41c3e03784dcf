// Baseline for `ugs list --all --ndjson`: the simplest Node loop that reads the same pages of the
// Customer API with undici's request(), one after the other, and writes each customer as one
// line of JSON. Base URL and API token from the same environment variables as ugs; the page size
// is ugs's with --all (1000), and the loop ends at the first short page, as ugs does.
import { request } from 'undici';

const PAGE_SIZE = 1000;
const headers = {
  accept: 'application/json',
  'explo-authorization': `Token ${process.env.UGS_API_TOKEN}`,
};
for (let page = 1; ; page++) {
  const url = `${process.env.UGS_BASE_URL}/v2/api/customers/?page=${page}&page_size=${PAGE_SIZE}`;
  const { statusCode, body } = await request(url, { headers });
  if (statusCode !== 200) throw new Error(`page ${page}: HTTP ${statusCode}`);
  const answer = await body.json();
  const customers = answer.results.customers;
  let text = '';
  for (const customer of customers) text += `${JSON.stringify(customer)}\n`;
  // Waits for the output to drain, as a well-behaved writer to a slow pipe must.
  if (!process.stdout.write(text)) await new Promise((done) => process.stdout.once('drain', done));
  if (customers.length < PAGE_SIZE || page * PAGE_SIZE >= answer.total_count) break;
}
