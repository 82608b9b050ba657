/** TLS termination and upstream TLS (see README.md in this folder). */
export {
  type CertificateSpec,
  CertificateStore,
  type LoadedCertificate,
  loadCertificateStore,
} from './certificate-store.ts';
export { buildEngineTls, checkUpstreamTls, type EngineTls } from './engine-tls.ts';
export { type TlsFacts, tlsFactsOf } from './facts.ts';
export { type ClientAuthSpec, type ListenerTls, loadListenerTls } from './listener-tls.ts';
export { certificateNames, NameTable } from './names.ts';
export { UpstreamTls, type UpstreamTlsOptions } from './upstream.ts';
