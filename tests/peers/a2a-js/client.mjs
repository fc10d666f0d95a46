// The official JavaScript SDK's client, @a2a-js/sdk (pinned in package.json), under the suite's
// client contract (docs/contracts.md §7, docs/clients.md).
//
//     npm ci --prefix tests/peers/a2a-js
//     streamcert run --client-cmd "node tests/peers/a2a-js/client.mjs" --profile client
//
// It reads STREAMCERT_URL (an origin), STREAMCERT_CASE and STREAMCERT_CONTEXT, does the work with the
// SDK and prints its final view as one JSON line: {"task", "artifacts", "plan", "interaction",
// "statusText"}. Logs go to stderr.
//
// What the SDK does (what is being certified):
// - ClientFactory.createFromUrl(origin) reads the card at /.well-known/agent-card.json
//   (DefaultAgentCardResolver) and picks the interface its transports serve (JSON-RPC first, as the
//   card lists it); the transport sets A2A-Version from the interface's protocolVersion;
// - Client.sendMessageStream: SendStreamingMessage when the card says capabilities.streaming, else it
//   falls back to SendMessage itself; its SSE parser (parseSseStream) and its ProtoJSON decoding;
// - the extension header through ServiceParameters / withA2AExtensions;
// - aggregation: the client keeps no task of its own, so the adapter feeds the events to the SDK's
//   own aggregator, the server's ResultManager over an InMemoryTaskStore (the one DefaultRequestHandler
//   uses: it takes each status as it arrives, joins `append` artifact chunks, ignores a status after a
//   terminal one and an update of a task it has not stored). The view's task, state, status text and
//   artifacts are what that store holds under the stream's task id.
//
// What the adapter does itself, as the minimum a typical app would (not the SDK's finding):
// - it mints the messageId (crypto.randomUUID; the SDK mints none) and binds the view to the id of
//   the first Task the stream carries (the ResultManager is per request and may forget it);
// - the progress/v1 plan and the interactions/v1 interaction are app-level metadata the SDK only
//   carries: the adapter reads them off the frames, keeps the plan of the latest status.timestamp
//   and the last interaction shown;
// - answers: at an interrupted state it stops reading the stream (as the SDK's samples do), sends the
//   context's next answer on the same task (seed 004's shape, the extension listed) and reads on; an
//   answer whose connection fails before anything came back is sent once more, the same message and
//   messageId (the SDK retries nothing);
// - an artifact's text is its text parts joined with no separator.

import { randomUUID } from 'node:crypto';
import { Message, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { ClientFactory, ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client';
import { AgentEvent, InMemoryTaskStore, ResultManager, ServerCallContext } from '@a2a-js/sdk/server';

const PROGRESS = 'https://docs.nylorun.com/a2a/progress/v1';
const INTERACTIONS = 'https://docs.nylorun.com/a2a/interactions/v1';
const UNDERSTOOD = [PROGRESS, INTERACTIONS]; // the extensions this app can show, activated when the card has them
const INTERRUPTED = [TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED];
const KINDS = { task: 'task', statusUpdate: 'statusUpdate', artifactUpdate: 'artifactUpdate' };

const log = (...args) => console.error('[a2a-js-client]', ...args);

const when = (status) => (status?.timestamp ? Date.parse(status.timestamp) : null);

function step(s) {
  const out = {};
  for (const key of ['label', 'state', 'note']) if (key in s) out[key] = s[key];
  return out;
}

/** What the app shows besides the SDK's Task: the plan (latest by timestamp) and the last interaction. */
class Shown {
  plan = null;
  planAt = null;
  interaction = null;

  offerPlan(metadata, at) {
    const steps = metadata?.[PROGRESS]?.steps;
    if (!Array.isArray(steps)) return;
    if (at !== null && this.planAt !== null && at < this.planAt) return; // an older plan arriving late
    this.plan = steps.filter((s) => s && typeof s === 'object').map(step);
    if (at !== null) this.planAt = at;
  }

  offerStatus(status) {
    const ix = status?.message?.metadata?.[INTERACTIONS];
    if (ix && typeof ix === 'object' && !Array.isArray(ix)) this.interaction = ix;
  }
}

/** One case: the SDK client, the SDK's ResultManager and store holding the task, what the app shows. */
class Run {
  constructor(client, extensions) {
    this.client = client;
    this.store = new InMemoryTaskStore();
    this.callContext = new ServerCallContext();
    this.shown = new Shown();
    this.options = extensions.length ? { serviceParameters: ServiceParameters.create(withA2AExtensions(...extensions)) } : {};
    this.taskId = null;
    this.events = 0;
  }

  async task() {
    return this.taskId === null ? undefined : this.store.load(this.taskId, this.callContext);
  }

  async take(event) {
    const kind = event.payload?.$case;
    if (!(kind in KINDS)) {
      log(`event ${kind}: not a task event, not aggregated`);
      return;
    }
    const item = event.payload.value;
    this.events += 1;
    log(`event ${this.events} from the SDK: ${kind}${brief(kind, item)}`);
    if (kind === 'task' && this.taskId === null) this.taskId = item.id;
    await new ResultManager(this.store, this.callContext).processEvent(AgentEvent[kind](item));
    if (kind !== 'artifactUpdate') { // a Task or a status update: a plan and an interaction may ride on it
      this.shown.offerPlan(item.metadata, when(item.status));
      this.shown.offerStatus(item.status);
    }
  }

  /** Send one message and read until the end, or an interrupted state to answer. An answer whose
   *  connection fails before anything came back is sent once more, the same message (seed 004: its
   *  messageId is the idempotency key); a new task's message is never re-sent. */
  async send(message, answersLeft) {
    for (const attempt of [1, 2]) {
      let received = 0;
      try {
        for await (const event of this.client.sendMessageStream({ message, configuration: undefined, metadata: undefined, tenant: '' }, this.options)) {
          received += 1;
          await this.take(event);
          const task = await this.task();
          if (answersLeft && task && INTERRUPTED.includes(task.status?.state)) return; // the app answers now
        }
        return;
      } catch (exc) {
        if (attempt === 1 && !received && message.taskId && isConnectionError(exc)) {
          log(`the answer's connection failed (${exc}): sending the same message again`);
          continue;
        }
        throw exc;
      }
    }
  }
}

function isConnectionError(exc) {
  for (let e = exc; e; e = e.cause) if (e instanceof TypeError || /fetch failed|socket|ECONNRESET|terminated/i.test(String(e.message))) return true;
  return false;
}

function brief(kind, item) {
  if (kind !== 'artifactUpdate') return ` ${taskStateToJSON(item.status?.state)}`;
  return ` ${item.artifact?.artifactId}${item.append ? ' append' : ''}${item.lastChunk ? ' lastChunk' : ''}`;
}

function firstMessage(context) {
  const message = Message.fromJSON(context.message ?? {});
  message.messageId = randomUUID();
  message.taskId = '';
  message.contextId = '';
  return message;
}

/** Seed 004's answer: a data part, the extension listed, its metadata naming the interaction. */
function answerMessage(answer, task, interaction) {
  const key = 'approved' in answer ? 'approved' : 'value';
  let meta = { [key]: answer[key] };
  if (interaction && interaction.interactionId !== undefined && interaction.interactionId !== null) {
    meta = { interactionId: interaction.interactionId, ...meta };
  }
  const message = Message.fromJSON({
    role: 'ROLE_USER', parts: [{ data: { [key]: answer[key] }, mediaType: 'application/json' }],
    extensions: [INTERACTIONS], metadata: { [INTERACTIONS]: meta },
  });
  Object.assign(message, { messageId: randomUUID(), taskId: task.id, contextId: task.contextId });
  return message;
}

function textOf(parts) {
  return (parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value);
}

function artifactView(artifact) {
  const view = { artifactId: artifact.artifactId, name: artifact.name };
  const data = (artifact.parts ?? []).filter((p) => p.content?.$case === 'data').map((p) => p.content.value);
  const texts = textOf(artifact.parts);
  if (data.length && !texts.length) view.data = data.length === 1 ? data[0] : data;
  else view.text = texts.join('');
  return view;
}

function viewOf(task, shown) {
  return {
    task: task ? { id: task.id, contextId: task.contextId, state: taskStateToJSON(task.status?.state) } : null,
    artifacts: task ? (task.artifacts ?? []).map(artifactView) : [],
    plan: shown.plan,
    interaction: shown.interaction,
    statusText: task?.status?.message ? textOf(task.status.message.parts).join('') : '',
  };
}

async function run(url, context) {
  const client = await new ClientFactory().createFromUrl(url);
  const card = await client.getAgentCard();
  const declared = (card.capabilities?.extensions ?? []).map((e) => e.uri);
  const job = new Run(client, UNDERSTOOD.filter((uri) => declared.includes(uri)));
  const answers = [...(context.answers ?? [])];
  let error = null;
  try {
    await job.send(firstMessage(context), answers.length);
    while (answers.length) {
      const task = await job.task();
      if (!task || !INTERRUPTED.includes(task.status?.state)) break;
      const answer = answers.shift();
      log(`answering ${JSON.stringify(answer)} on task ${task.id}`);
      await job.send(answerMessage(answer, task, job.shown.interaction), answers.length);
    }
  } catch (exc) {
    error = `${exc?.name ?? 'Error'}: ${exc?.message ?? exc}`;
    log(`the SDK stopped: ${error}`);
  }
  const view = viewOf(await job.task(), job.shown);
  if (error) view.error = error; // not part of the contract's view: for the person reading the report
  return view;
}

const url = process.env.STREAMCERT_URL;
const context = JSON.parse(process.env.STREAMCERT_CONTEXT || '{}');
log(`case ${process.env.STREAMCERT_CASE ?? '?'} against ${url}`);
const view = await run(url, context);
process.stdout.write(`${JSON.stringify(view)}\n`);
process.exit(0);
