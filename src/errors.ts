// The error catalog: every wire error code latch emits, its number and its HTTP status.
// Modules throw `AppError(code, message)`; only src/http maps an AppError to a response.
// Unknown errors become `internal_error`; their cause is logged, never sent.

/** code name → [numeric code, HTTP status]. Numbers follow OpenFGA's errors_ignore.proto. */
const CATALOG = {
  // 401 — authentication (AuthErrorCode 1000–1999)
  auth_failed_invalid_subject: [1001, 401],
  auth_failed_invalid_audience: [1002, 401],
  auth_failed_invalid_issuer: [1003, 401],
  invalid_claims: [1004, 401],
  auth_failed_invalid_bearer_token: [1005, 401],
  missing_customer_in_bearer_token: [1006, 401],
  missing_store_in_bearer_token: [1007, 401],
  bearer_token_missing: [1010, 401],
  unauthenticated: [1500, 401],
  auth_failure: [1501, 401],
  // 403 — authorization (seed / docs/reference/decisions.md D3)
  forbidden: [1600, 403],
  insufficient_permissions: [1601, 403],
  store_mismatch_in_bearer_token: [1602, 403],
  customer_mismatch_in_bearer_token: [1603, 403],
  unauthorized_principal: [1604, 403],
  // 400 — request errors (ErrorCode 2000–3499)
  validation_error: [2000, 400],
  authorization_model_not_found: [2001, 400],
  authorization_model_resolution_too_complex: [2002, 400],
  invalid_write_input: [2003, 400],
  cannot_allow_duplicate_tuples_in_one_request: [2004, 400],
  cannot_allow_duplicate_types_in_one_request: [2005, 400],
  cannot_allow_multiple_references_to_one_relation: [2006, 400],
  invalid_continuation_token: [2007, 400],
  invalid_tuple_set: [2008, 400],
  invalid_check_input: [2009, 400],
  invalid_expand_input: [2010, 400],
  unsupported_user_set: [2011, 400],
  invalid_object_format: [2012, 400],
  write_failed_due_to_invalid_input: [2017, 400],
  authorization_model_assertions_not_found: [2018, 400],
  latest_authorization_model_not_found: [2020, 400],
  type_not_found: [2021, 400],
  relation_not_found: [2022, 400],
  empty_relation_definition: [2023, 400],
  invalid_user: [2025, 400],
  invalid_tuple: [2027, 400],
  unknown_relation: [2028, 400],
  store_id_invalid_length: [2030, 400],
  assertions_too_many_items: [2033, 400],
  id_too_long: [2034, 400],
  authorization_model_id_too_long: [2036, 400],
  tuple_key_value_not_specified: [2037, 400],
  tuple_keys_too_many_or_too_few_items: [2038, 400],
  page_size_invalid: [2039, 400],
  param_missing_value: [2040, 400],
  difference_base_missing_value: [2041, 400],
  subtract_base_missing_value: [2042, 400],
  object_too_long: [2043, 400],
  relation_too_long: [2044, 400],
  type_definitions_too_few_items: [2045, 400],
  type_invalid_length: [2046, 400],
  type_invalid_pattern: [2047, 400],
  relations_too_few_items: [2048, 400],
  relations_too_long: [2049, 400],
  relations_invalid_pattern: [2050, 400],
  object_invalid_pattern: [2051, 400],
  query_string_type_continuation_token_mismatch: [2052, 400],
  exceeded_entity_limit: [2053, 400],
  invalid_contextual_tuple: [2054, 400],
  duplicate_contextual_tuple: [2055, 400],
  invalid_authorization_model: [2056, 400],
  unsupported_schema_version: [2057, 400],
  cancelled: [2058, 400],
  invalid_start_time: [2059, 400],
  // latch's own: queries at a past revision (docs/audit.md)
  revision_in_future: [2100, 400],
  revision_not_retained: [2101, 400],
  time_before_store: [2102, 400],
  revision_too_far_back: [2103, 400],
  // 409 — transaction conflict (docs/reference/decisions.md D4: the wire code is the string "10")
  transaction_conflict: [10, 409],
  // latch's own: a guarded write whose precondition failed (docs/changing-models.md); nothing written
  write_precondition_failed: [2110, 409],
  // 421 — latch's own (placement, docs/deployment.md): a msgpack channel request for a store another
  // node serves; `node_url` names it (HTTP requests are forwarded instead)
  store_served_elsewhere: [2120, 421],
  // 422 — throttling
  throttled_timeout_error: [3500, 422],
  // 429 — rate limits (seed)
  rate_limit_exceeded: [3600, 429],
  auth_rate_limit_exceeded: [3601, 429],
  stream_limit_exceeded: [3602, 429],
  // 500 — internal (InternalErrorCode 4000–4999)
  internal_error: [4000, 500],
  auth_internal_error: [4001, 500],
  auth_failed_error_fetching_well_known_jwks: [4002, 500],
  deadline_exceeded: [4004, 500],
  already_exists: [4005, 500],
  resource_exhausted: [4006, 500],
  failed_precondition: [4007, 500],
  aborted: [4008, 500],
  out_of_range: [4009, 500],
  unavailable: [4010, 503], // docs/reference/decisions.md D17: 503 for a dependency that is down or a server going away
  data_loss: [4011, 500],
  // 404 — not found (NotFoundErrorCode ≥ 5000)
  undefined_endpoint: [5000, 404],
  store_id_not_found: [5002, 404],
  resource_not_found: [5003, 404],
  unimplemented: [5004, 404],
  // latch's own (permission indexes, docs/permission-indexes.md)
  index_id_not_found: [5100, 404],
  // latch's own (shadow evaluation, docs/changing-models.md): the shadow names no model of the store
  shadow_model_not_found: [5101, 404],
  // latch's own (the decision log, docs/audit.md)
  decision_not_found: [5110, 404],
} as const satisfies Record<string, readonly [number, number]>;

export type ErrorCode = keyof typeof CATALOG;

/** A failure with a stable wire code. `message` is sent to the client; `cause` is only logged. */
export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra wire fields beside code and message (write_precondition_failed: `precondition_index`). */
  readonly fields: Readonly<Record<string, number | string>> | undefined;
  /** Seconds a client should wait before retrying, sent as `Retry-After` (rate limits, a store with no node ready). */
  readonly retryAfter: number | undefined;
  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; fields?: Readonly<Record<string, number | string>>; retryAfter?: number },
  ) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.fields = options?.fields;
    this.retryAfter = options?.retryAfter;
  }

  /** HTTP status of this error's code. */
  get status(): number {
    return CATALOG[this.code][1];
  }

  /** OpenFGA numeric code (the conformance suites assert these). */
  get numeric(): number {
    return CATALOG[this.code][0];
  }

  /** The wire body: `{code, message}`; a 409 carries the literal code "10" (D4). */
  toBody(): { code: string; message: string } {
    const body = { code: this.code === 'transaction_conflict' ? '10' : this.code, message: this.message };
    return this.fields ? { ...this.fields, ...body } : body;
  }
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.prototype.hasOwnProperty.call(CATALOG, value);
}

/** Any thrown value as an AppError; unknown failures become `internal_error` with the cause kept. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal_error', 'Internal Server Error', { cause: err });
}

/** Shorthand constructors for the most common faults. */
export const fail = {
  validation: (message: string): AppError => new AppError('validation_error', message),
  storeNotFound: (): AppError => new AppError('store_id_not_found', 'Store ID not found'),
  modelNotFound: (id: string): AppError =>
    new AppError('authorization_model_not_found', `Authorization Model '${id}' not found`),
  latestModelNotFound: (storeId: string): AppError =>
    new AppError('latest_authorization_model_not_found', `No authorization models found for store '${storeId}'`),
  tooComplex: (): AppError =>
    new AppError(
      'authorization_model_resolution_too_complex',
      'Authorization Model resolution required too many rewrite rules to be resolved. Check your authorization model for infinite recursion or too much nesting',
    ),
};
