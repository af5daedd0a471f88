// The one table of HTTP status lines every uWS reply of latch writes (API replies, the token
// endpoint, refused channel upgrades): uWS takes the status as the whole line's text.

const STATUS_LINE: Readonly<Record<number, string>> = {
  200: '200 OK',
  201: '201 Created',
  204: '204 No Content',
  304: '304 Not Modified',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  409: '409 Conflict',
  413: '413 Content Too Large',
  421: '421 Misdirected Request',
  422: '422 Unprocessable Entity',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

/** The status line of `status` (`"404 Not Found"`); a code missing from the table keeps its number. */
export function statusLine(status: number): string {
  return STATUS_LINE[status] ?? `${status} Unknown`;
}
