import type { Operation } from '../connectors/connector.ts';
import { decryptSecret, encryptSecret } from '../secrets/cipher.ts';
import type { ExecuteCall, ExecutionJob } from './call.ts';

/** What an async call's job carries of its request: never stored in the clear. */
interface SealedRequest {
  integration_id: string;
  operation: Operation;
  fields: Record<string, unknown>;
  key_id: string | null;
  user_id: string | null;
  request_id: string;
}

const sealContext = (tenantId: string, executionId: string) => `async-request:${tenantId}:${executionId}`;

/** The job of an accepted call: its request sealed (AES-GCM with the master key, bound to its tenant and execution). */
export function sealedJob(masterKey: Buffer, call: ExecuteCall, executionId: string): ExecutionJob {
  const request: SealedRequest = {
    integration_id: call.integrationId,
    operation: call.operation,
    fields: call.fields,
    key_id: call.keyId,
    user_id: call.userId,
    request_id: call.requestId,
  };
  return {
    tenant_id: call.tenantId,
    execution_id: executionId,
    sealed: encryptSecret(masterKey, JSON.stringify(request), sealContext(call.tenantId, executionId)),
  };
}

/** The call a job holds, opened, with `log` for its lines. */
export function openedCall(masterKey: Buffer, job: ExecutionJob, log: ExecuteCall['log']): ExecuteCall {
  const { tenant_id: tenantId, execution_id: executionId } = job;
  const request = JSON.parse(decryptSecret(masterKey, job.sealed, sealContext(tenantId, executionId))) as SealedRequest;
  return {
    tenantId,
    keyId: request.key_id,
    userId: request.user_id,
    integrationId: request.integration_id,
    operation: request.operation,
    fields: request.fields,
    requestId: request.request_id,
    log: log.child({
      execution_id: executionId,
      tenant_id: tenantId,
      integration_id: request.integration_id,
      operation: request.operation,
      request_id: request.request_id,
    }),
  };
}
