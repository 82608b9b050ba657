/**
 * BFE primitives that need more than the request head (body, response, module tags, context):
 * they are known names, so a rule using one gets a clear error instead of "not found".
 */

/** Names refused with "not available when routing on the request head". */
export const UNAVAILABLE: ReadonlySet<string> = new Set([
  'req_tag_match',
  'req_context_value_in',
  'req_body_json_in',
  'req_body_json_prefix_in',
  'res_code_in',
  'res_header_key_in',
  'res_header_value_in',
]);
