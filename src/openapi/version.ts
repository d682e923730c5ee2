/** Which OpenAPI generation a document belongs to. */
export type SpecVersion = '2.0' | '3.0' | '3.1';
