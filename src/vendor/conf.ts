import Conf from 'conf';

export { Conf };
