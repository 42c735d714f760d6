/** What a command's module gives the command line's registry (`commands.ts`): its options and its handler. */
import type { CommandModule } from 'yargs';

/** What a command's module gives: its options and its handler. Its usage and description are listed in the registry. */
// biome-ignore lint/suspicious/noExplicitAny: each command has its own argument type; yargs erases it here.
export type CommandBody<A = any> = Pick<CommandModule<object, A>, 'builder' | 'handler'>;
