/**
 * Colour as decoration: plain text unless the stream is a terminal that shows colour (or colour is
 * forced). chalk is imported only when colour is actually wanted.
 */
export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  red(text: string): string;
  cyan(text: string): string;
}

export const plainStyle: Style = {
  bold: (t) => t,
  dim: (t) => t,
  green: (t) => t,
  yellow: (t) => t,
  red: (t) => t,
  cyan: (t) => t,
};

/** Colours by chalk, imported on first use: a run that prints no colour never loads it. */
export async function loadColorStyle(): Promise<Style> {
  const { Chalk } = await import('../vendor/chalk.js');
  const chalk = new Chalk({ level: 1 });
  return {
    bold: (t) => chalk.bold(t),
    dim: (t) => chalk.dim(t),
    green: (t) => chalk.green(t),
    yellow: (t) => chalk.yellow(t),
    red: (t) => chalk.red(t),
    cyan: (t) => chalk.cyan(t),
  };
}
