// A real A2A 1.0 peer built on the official JavaScript SDK, @a2a-js/sdk (pinned in package.json).
//
// It plays the streamcert test-agent script (docs/contracts.md §6) on the SDK's own server stack: an
// AgentExecutor publishing AgentEvents on the SDK's ExecutionEventBus, DefaultRequestHandler with
// InMemoryTaskStore, and the SDK's Express handlers (agentCardHandler, jsonRpcHandler, restHandler).
// Nothing here corrects what the SDK puts on the wire: the point is to run the suite against it.
//
//     npm ci --prefix tests/peers/a2a-js
//     node tests/peers/a2a-js/agent.mjs [--port 0] [--bindings jsonrpc[,http-json]]
//         [--rpc-path /a2a/jsonrpc] [--rest-path /a2a/rest] [--push] [--secured]
//
// The first line on stdout is the base URL (http://127.0.0.1:PORT); logs go to stderr. The card is
// at /.well-known/agent-card.json and declares each interface served, JSONRPC first.
//
// Script steps played: status, artifact (chunks or data), sleep, finish, fail, ask and say. `ask`
// uses the SDK's input-required flow: a status update TASK_STATE_INPUT_REQUIRED with the question as
// its message, then execute returns (the SDK keeps the task's bus alive in that state); the follow-up
// message on the task is the answer (execute runs again with requestContext.task set) and the script
// goes on where it stopped. `say` reports the last answer (its text, or its data as JSON). The peer
// does not implement interactions/v1 or progress/v1 and its card declares neither. Any other step
// fails the task with a message naming it; no script: the task completes with a short message.
// Cancel: cancelTask publishes TASK_STATE_CANCELED on the task's bus (the interface's contract) and
// the running script stops at its next step without publishing anything more.
//
// --push: the card declares capabilities.pushNotifications: true and the handler is given the SDK's own
// InMemoryPushNotificationStore and DefaultPushNotificationSender (what it makes itself for such a card), with
// their defaults: nothing screens, retries or times out but what the SDK does (issue 26).
// --secured: the card declares a bearer scheme (securitySchemes.bearer, an HTTP auth scheme `Bearer`), requires it
// (securityRequirements) and declares the extended card (the card with one more skill, given to the handler).
// The SDK authenticates nothing itself: it asks the application for a `userBuilder` (its only built-in is
// UserBuilder.noAuthentication). The one this agent gives is the app-level part a user of the SDK writes: a request
// whose `Authorization` is `Bearer ` + SECURED_TOKEN is an authenticated user, any other is not. Nothing refuses a
// request: what is enforced is what the SDK enforces with that user (issue 27).

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent, DefaultPushNotificationSender, DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const SCRIPT_KEY = 'urn:streamcert:script';
const HOST = '127.0.0.1';
const BINDINGS = ['jsonrpc', 'http-json']; // the card lists them in this order
const SECURED_TOKEN = 'peer-test-token'; // --secured: the bearer token taken (a test token, as tox passes it)

const log = (...args) => console.error('[a2a-js-agent]', ...args);

class ScriptError extends Error {}

function textPart(text) {
  return { content: { $case: 'text', value: String(text) }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function dataPart(value) {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

/** The script object from the message's metadata, or null when there is none. */
function readScript(message) {
  const script = message?.metadata?.[SCRIPT_KEY];
  if (script === undefined || script === null) return null;
  if (typeof script !== 'object' || Array.isArray(script)) throw new ScriptError(`${SCRIPT_KEY} must be an object`);
  if (script.version !== 1) throw new ScriptError(`unsupported script version: ${JSON.stringify(script.version)}`);
  if (!Array.isArray(script.steps)) throw new ScriptError("script has no 'steps' list");
  return script;
}

/** A follow-up message's answer as the model sees it: its text, or its data as JSON. */
function answerText(message) {
  for (const part of message?.parts ?? []) {
    if (part.content?.$case === 'text') return part.content.value;
    if (part.content?.$case === 'data') return JSON.stringify(part.content.value);
  }
  return '';
}

class ScriptedExecutor {
  constructor() {
    this.paused = new Map(); // task id → {steps, index}: where its script waits for an answer
    this.canceled = new Set(); // task ids whose cancel was published: their script stops
    this.contexts = new Map(); // task id → context id, for the cancel's status update
  }

  execute = async (requestContext, eventBus) => {
    const { taskId, contextId } = requestContext;
    const message = requestContext.userMessage;
    this.contexts.set(taskId, contextId);
    const publishStatus = (state, text) => eventBus.publish(AgentEvent.statusUpdate({
      taskId, contextId, metadata: undefined,
      status: {
        state, timestamp: new Date().toISOString(),
        message: text === undefined ? undefined : {
          role: Role.ROLE_AGENT, messageId: randomUUID(), parts: [textPart(text)], taskId, contextId,
          metadata: undefined, extensions: [], referenceTaskIds: [],
        },
      },
    }));

    // The SDK's contract: every call publishes a Task (or a Message) first, follow-up turns included.
    const resumed = requestContext.task ? this.paused.get(taskId) : undefined;
    this.paused.delete(taskId);
    if (requestContext.task) {
      eventBus.publish(AgentEvent.task(requestContext.task));
    } else {
      eventBus.publish(AgentEvent.task({
        id: taskId, contextId, artifacts: [], history: [message], metadata: undefined,
        status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
      }));
    }

    let steps, start, lastResult = '';
    if (resumed) {
      lastResult = answerText(message);
      publishStatus(TaskState.TASK_STATE_WORKING);
      ({ steps, index: start } = resumed);
    } else {
      let script;
      try {
        script = readScript(message);
      } catch (exc) {
        if (!(exc instanceof ScriptError)) throw exc;
        publishStatus(TaskState.TASK_STATE_FAILED, exc.message);
        return;
      }
      if (script === null) {
        publishStatus(TaskState.TASK_STATE_COMPLETED, 'No streamcert script in the message; nothing to do.');
        return;
      }
      ({ steps } = script);
      start = 0;
    }

    for (let index = start; index < steps.length; index++) {
      if (this.canceled.has(taskId)) return; // the cancel is on the bus already
      const step = steps[index];
      const keys = step && typeof step === 'object' && !Array.isArray(step) ? Object.keys(step) : [];
      const kind = keys.length === 1 ? keys[0] : null;
      const arg = kind === null ? undefined : step[kind];
      if (kind === 'status') {
        publishStatus(TaskState.TASK_STATE_WORKING, arg);
      } else if (kind === 'artifact' && arg && Array.isArray(arg.chunks)) {
        const last = arg.chunks.length - 1;
        arg.chunks.forEach((chunk, i) => eventBus.publish(AgentEvent.artifactUpdate({
          taskId, contextId, metadata: undefined, append: i > 0, lastChunk: i === last,
          artifact: {
            artifactId: arg.artifactId, name: i === 0 ? (arg.name ?? '') : '', description: '',
            parts: [textPart(chunk)], metadata: undefined, extensions: [],
          },
        })));
      } else if (kind === 'artifact' && arg && 'data' in arg) {
        eventBus.publish(AgentEvent.artifactUpdate({
          taskId, contextId, metadata: undefined, append: false, lastChunk: true,
          artifact: {
            artifactId: arg.artifactId, name: arg.name ?? '', description: '',
            parts: [dataPart(arg.data)], metadata: undefined, extensions: [],
          },
        }));
      } else if (kind === 'sleep') {
        await new Promise((resolve) => setTimeout(resolve, Number(arg)));
      } else if (kind === 'ask') {
        this.paused.set(taskId, { steps, index: index + 1 });
        publishStatus(TaskState.TASK_STATE_INPUT_REQUIRED, arg);
        return;
      } else if (kind === 'say') {
        publishStatus(TaskState.TASK_STATE_WORKING, String(arg).replaceAll('{{result}}', lastResult));
      } else if (kind === 'finish') {
        publishStatus(TaskState.TASK_STATE_COMPLETED, arg);
        return;
      } else if (kind === 'fail') {
        publishStatus(TaskState.TASK_STATE_FAILED, arg);
        return;
      } else {
        const name = kind ?? JSON.stringify(step);
        publishStatus(TaskState.TASK_STATE_FAILED,
          `unknown script step #${index}: '${name}' (not supported by the @a2a-js/sdk peer)`);
        return;
      }
    }
    // The script ended without finish/fail: execute returns and the task stays where the script
    // left it. That is the script's choice, not corrected here.
  };

  cancelTask = async (taskId, eventBus) => {
    this.canceled.add(taskId);
    this.paused.delete(taskId);
    const contextId = this.contexts.get(taskId) ?? '';
    eventBus.publish(AgentEvent.statusUpdate({
      taskId, contextId, metadata: undefined,
      status: {
        state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(),
        message: {
          role: Role.ROLE_AGENT, messageId: randomUUID(), parts: [textPart('Canceled on request.')], taskId, contextId,
          metadata: undefined, extensions: [], referenceTaskIds: [],
        },
      },
    }));
  };
}

function buildCard(baseUrl, rpcPath, restPath, push = false) {
  const supportedInterfaces = [];
  if (rpcPath !== null) supportedInterfaces.push({ url: baseUrl + rpcPath, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' });
  if (restPath !== null) supportedInterfaces.push({ url: baseUrl + restPath, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' });
  return {
    name: 'streamcert @a2a-js/sdk peer',
    description: 'Plays streamcert test-agent scripts on the official JavaScript SDK server stack.',
    supportedInterfaces,
    provider: undefined,
    version: '0.1.0',
    capabilities: { streaming: true, pushNotifications: push, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [{
      id: 'streamcert-script', name: 'Play a streamcert script',
      description: 'Performs the urn:streamcert:script steps carried in the message metadata.',
      tags: ['streamcert', 'test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [],
    }],
    signatures: [],
  };
}

/** --secured: the card requires a bearer token and declares the extended card; returns the extended card (the card
 * and one more skill). The scheme is written as the SDK's AgentCard type has it (a `$case`/`value` oneof): the card
 * handler serializes that object as it is. */
function secure(card) {
  card.securitySchemes = {
    bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: '', scheme: 'Bearer', bearerFormat: '' } } },
  };
  card.securityRequirements = [{ schemes: { bearer: { list: [] } } }];
  card.capabilities.extendedAgentCard = true;
  return {
    ...structuredClone(card),
    skills: [...card.skills, {
      id: 'extended', name: 'Extended', description: 'Only in the extended card.', tags: ['streamcert'],
      examples: [], inputModes: [], outputModes: [], securityRequirements: [],
    }],
  };
}

/** --secured: the application's user builder (the SDK has none that reads credentials). */
function bearerUser(req) {
  const authenticated = req.headers.authorization === `Bearer ${SECURED_TOKEN}`;
  return Promise.resolve({ isAuthenticated: authenticated, userName: authenticated ? 'peer-test-user' : '' });
}

function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      bindings: { type: 'string', default: 'jsonrpc' },
      'rpc-path': { type: 'string', default: '/a2a/jsonrpc' },
      'rest-path': { type: 'string', default: '/a2a/rest' },
      push: { type: 'boolean', default: false },
      secured: { type: 'boolean', default: false },
    },
  });
  const bindings = values.bindings.split(',').map((name) => name.trim()).filter(Boolean);
  if (!bindings.length || bindings.some((name) => !BINDINGS.includes(name))) {
    console.error(`bindings are a comma list of ${BINDINGS.join(', ')}; got ${JSON.stringify(values.bindings)}`);
    process.exit(2);
  }
  const rpcPath = bindings.includes('jsonrpc') ? values['rpc-path'] : null;
  const restPath = bindings.includes('http-json') ? values['rest-path'] : null;

  // Bind first so the card can name the real port.
  const server = http.createServer();
  server.listen(Number(values.port), HOST, () => {
    const baseUrl = `http://${HOST}:${server.address().port}`;
    const card = buildCard(baseUrl, rpcPath, restPath, values.push);
    const extended = values.secured ? secure(card) : undefined;
    const taskStore = new InMemoryTaskStore();
    const executor = new ScriptedExecutor();
    const pushStore = values.push ? new InMemoryPushNotificationStore() : undefined;
    const pushSender = values.push ? new DefaultPushNotificationSender(pushStore) : undefined;
    const requestHandler = new DefaultRequestHandler(card, taskStore, executor, undefined, pushStore, pushSender, extended);
    const userBuilder = values.secured ? bearerUser : UserBuilder.noAuthentication;
    const app = express();
    app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
    if (rpcPath !== null) app.use(rpcPath, jsonRpcHandler({ requestHandler, userBuilder }));
    if (restPath !== null) app.use(restPath, restHandler({ requestHandler, userBuilder }));
    server.on('request', app);
    console.log(baseUrl);
    log('serving', bindings.join(', '), 'at', baseUrl, values.push ? '(push)' : '', values.secured ? '(secured)' : '');
  });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)) && server.closeAllConnections());
}

main();
