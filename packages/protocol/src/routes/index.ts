/**
 * The route table: every REST operation of the service, keyed by the SDK method that calls it,
 * assembled from one file per SPEC area.
 */
import { decisionRoutes } from './decisions.js';

export const ROUTES = {
  ...decisionRoutes,
};

/** Name of a route in {@link ROUTES} (= the `ParleyClient` method calling it). */
export type RouteName = keyof typeof ROUTES;
