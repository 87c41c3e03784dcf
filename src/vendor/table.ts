import Table from 'cli-table3';

export { Table };
