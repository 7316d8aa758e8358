// Types of node-requirement.mjs, which stays plain JavaScript so that old Node versions run it.
export declare const MINIMUM_NODE: string;
export declare function nodeSatisfies(version: string, minimum: string): boolean;
export declare function nodeVersionProblem(version: string, minimum?: string): string | undefined;
export declare function exitIfNodeTooOld(): void;
