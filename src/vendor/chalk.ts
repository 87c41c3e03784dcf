export { Chalk } from 'chalk';
