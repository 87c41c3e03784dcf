// RFC 4180 has corners that hand-written CSV code gets wrong: quotes doubled inside quoted cells,
// commas and line breaks inside quotes, CRLF and LF records in one file, a UTF-8 BOM from Excel.
// csv-parse reads them all, streaming (bulk input) or a line at a time (resuming from a results
// file); csv-stringify quotes exactly the cells that need it (bulk results).
export { parse } from 'csv-parse';
export { parse as parseSync } from 'csv-parse/sync';
export { stringify } from 'csv-stringify/sync';
