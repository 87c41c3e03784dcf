// RFC 4180 has corners that hand-written CSV code gets wrong: quotes doubled inside quoted cells,
// commas and line breaks inside quotes, CRLF and LF records in one file, a UTF-8 BOM from Excel.
// csv-parse reads them all, streaming; csv-stringify quotes exactly the cells that need it.
export { parse } from 'csv-parse';
export { stringify } from 'csv-stringify/sync';
