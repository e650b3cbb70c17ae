// How many hits a search returns at most: here on its own so the command line's help can name it
// without loading the search code.
export const SEARCH_LIMIT = 100;
