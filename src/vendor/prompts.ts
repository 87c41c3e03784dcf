export { confirm, input, password } from '@inquirer/prompts';
