/**
 * Attachments and push registration (SPEC §2.5, §4.7): schemas, route rows and frames.
 */

/** Route rows of this area (filled as the area moves into the contract). */
export const attachmentsRoutes = {};
