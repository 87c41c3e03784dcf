// A spinner that erases itself has to track the lines it drew, the terminal's width, the cursor
// and other writes to the same terminal while it spins; yocto-spinner does all of that in one
// small file (its one dependency is yoctocolors) and lets ugs keep its own signal handling.
export { type Color, default as yoctoSpinner, type Spinner } from 'yocto-spinner';
