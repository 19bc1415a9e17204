/**
 * @module token-lifetime-limits
 * The bounds of the two options that decide how long a token may be admitted (`tokenLifetime` and
 * `clockTolerance`): what the configuration accepts, and how long a deny-list entry must last when the
 * token's own expiry is not known.
 */

/** Longest token lifetime `tokenLifetime` accepts, in seconds (a day). */
export const MAX_TOKEN_LIFETIME = 86_400;

/** Largest `clockTolerance` accepted, in seconds. */
export const MAX_CLOCK_TOLERANCE = 300;
