/**
 * Search mode's words: the terms on both sides (Porter-stemmed, camelCase and separators split),
 * the intent of a query (verbs and question forms), and the intent of an operation (its method
 * and the shape of its path).
 */
import { describe, expect, it } from 'vitest';
import { operationIntent, queryIntent, terms, words } from '../../../templates/runtime/search/search-text.js';

describe('search words', () => {
  it('splits names and text into words and stems them the same on both sides', () => {
    expect(words('PostCustomersCustomer issues_create-comment HTTPServer /repos/{owner}')).toEqual([
      'post',
      'customers',
      'customer',
      'issues',
      'create',
      'comment',
      'http',
      'server',
      'repos',
      'owner',
    ]);
    // an acronym's plural stays one word
    expect(words('which CRDs and PRs')).toEqual(['which', 'crds', 'and', 'prs']);
    expect(terms('the <b>merged</b> issues, merging [docs](https://x.test/a) repositories')).toEqual(['merg', 'issu', 'merg', 'doc', 'repositori']);
    // common words are dropped before and after stemming ("one" stems to "on")
    expect(terms('give one user another role')).toEqual(['give', 'user', 'role']);
  });

  it('reads the intent of a query from its verb or its question form', () => {
    expect(queryIntent('which pull requests are open in the repo')).toBe('list');
    expect(queryIntent('what pods are running')).toBe('list');
    expect(queryIntent('how many droplets do I have')).toBe('list');
    expect(queryIntent('show me every webhook')).toBe('list');
    expect(queryIntent('show the build logs for my app')).toBe('read');
    expect(queryIntent('spin up a new server')).toBe('create');
    expect(queryIntent('rename a label')).toBe('update');
    expect(queryIntent('close issue 42')).toBe('update');
    expect(queryIntent('wipe all secrets in a namespace')).toBe('delete');
    expect(queryIntent('tear down a VM')).toBe('delete');
    expect(queryIntent('who is in the org')).toBe('list');
    expect(queryIntent('who am I logged in as')).toBeUndefined();
    expect(queryIntent('how much money is in my account')).toBe('read');
    expect(queryIntent('what is the status of action 123')).toBe('read');
    expect(queryIntent('currency conversion rates')).toBeUndefined();
  });

  it('reads everyday verbs, a read of something plural as a list, un- verbs as a delete, and a verb-like noun after a determiner as no verb', () => {
    expect(queryIntent('store a database password in the cluster')).toBe('create');
    expect(queryIntent('release a number I no longer need')).toBe('delete');
    expect(queryIntent('hang up a call that is still in progress')).toBe('update');
    // reading what is plural lists it; reading one thing reads it
    expect(queryIntent('get the logs of a CI run')).toBe('list');
    expect(queryIntent('show recordings of a conference')).toBe('list');
    expect(queryIntent('get the status of a job')).toBe('read');
    expect(queryIntent('get the access of a user')).toBe('read');
    // undoing a relation deletes it; a word that only starts with "un" says nothing
    expect(queryIntent('unwatch a repository')).toBe('delete');
    expect(queryIntent('unread notifications')).toBeUndefined();
    // "charge" and "run" are verbs at the start, nouns after "a" / "the"
    expect(queryIntent('charge a card $20')).toBe('create');
    expect(queryIntent('refund a charge')).toBeUndefined();
    expect(queryIntent('logs for the run')).toBeUndefined();
  });

  it('reads the intent of an operation from its method and path shape', () => {
    expect(operationIntent('GET', '/repos/{owner}/{repo}/issues', 'issues_list-for-repo')).toBe('list');
    expect(operationIntent('GET', '/api/v1/namespaces/{namespace}/pods', 'listCoreV1NamespacedPod')).toBe('list');
    expect(operationIntent('GET', '/v1/customers/{customer}', 'GetCustomersCustomer')).toBe('read');
    expect(operationIntent('GET', '/v1/balance', 'GetBalance')).toBe('read');
    expect(operationIntent('GET', '/2010-04-01/Accounts/{AccountSid}/Calls.json', 'ListCall')).toBe('list');
    expect(operationIntent('POST', '/v1/customers', 'PostCustomers')).toBe('create');
    expect(operationIntent('POST', '/v1/customers/{customer}', 'PostCustomersCustomer')).toBe('update');
    expect(operationIntent('POST', '/v1/invoices/{invoice}/finalize', 'PostInvoicesInvoiceFinalize')).toBeUndefined();
    expect(operationIntent('PUT', '/user/starred/{owner}/{repo}', 'activity_star')).toBe('update');
    expect(operationIntent('DELETE', '/v2/droplets/{id}', 'droplets_destroy')).toBe('delete');
    expect(operationIntent(undefined, undefined, 'handler_tool')).toBeUndefined();
  });
});
