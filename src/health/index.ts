/** Health checks: passive (after failNum connect failures) and active probing. See README.md. */
export { BackendChecker, type HealthListener } from './checker.ts';
export { type HealthCheck, type HealthEntry, HealthManager } from './manager.ts';
export { httpProbe, probe, tcpProbe } from './probe.ts';
