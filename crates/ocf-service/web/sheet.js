// The live sheet: reads a character's sheet, subscribes to its changes (server-sent events) and
// re-renders only the rows and parts that changed. Input fields are edited in place; every write
// names the revision it was made against, and a refused one shows why.
"use strict";

const state = { id: null, revision: 0, sheet: null, inputs: {}, events: null };
const $ = (selector) => document.querySelector(selector);

function status(text, error) {
  const element = $("#status");
  element.textContent = text;
  element.className = error ? "error" : "";
}

// Every call: a write's body is JSON with its content type (the service refuses any other), the
// session cookie goes with it (same origin), and the browser adds the `Origin` the service checks.
async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
    credentials: "same-origin",
  });
  const json = await response.json();
  if (response.status === 401 && path !== "/api/login") showLogin();
  if (!response.ok) {
    const error = new Error((json.errors || []).map((e) => `${e.code}: ${e.message}`).join("; "));
    error.status = response.status;
    error.errors = json.errors || [];
    throw error;
  }
  return json;
}

function show(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

// A field's group is the first part of its ID after the pack: `abilities` for
// `5e-srd-5.1:abilities.str.score`.
function groupOf(field) {
  const local = field.includes(":") ? field.slice(field.indexOf(":") + 1) : field;
  return local.split(".")[0];
}

function rowId(field) {
  return "field-" + field.replace(/[^A-Za-z0-9_-]/g, "_");
}

function breakdownText(value) {
  const lines = [`base ${show(value.base)}`];
  for (const step of value.breakdown || []) {
    const source = step.source ? ` (${step.source.entry || step.source.id || step.source.type})` : "";
    lines.push(`${step.op} ${show(step.value)}${source}`);
  }
  return lines.join("\n");
}

function renderRow(field, value) {
  const row = document.createElement("tr");
  row.className = "field";
  row.id = rowId(field);
  row.dataset.field = field;
  row.title = breakdownText(value);
  const name = document.createElement("td");
  name.className = "name";
  name.textContent = field;
  const cell = document.createElement("td");
  cell.className = "value";
  cell.textContent = show(value.value);
  const editing = document.createElement("td");
  editing.className = "input";
  // An input field's box holds its saved value (the base the effects start from); the value
  // beside it is the result.
  if (state.inputs[field]) {
    const box = document.createElement("input");
    box.className = "edit";
    box.value = show(value.base);
    box.setAttribute("aria-label", field);
    box.addEventListener("change", () => edit(field, box));
    editing.appendChild(box);
  }
  row.append(name, cell, editing);
  // A tap shows the breakdown for devices without hover.
  row.addEventListener("click", (event) => {
    if (event.target.tagName === "INPUT") return;
    const next = row.nextElementSibling;
    if (next && next.classList.contains("breakdown")) { next.remove(); return; }
    const detail = document.createElement("tr");
    detail.className = "breakdown";
    const td = document.createElement("td");
    td.colSpan = 3;
    td.textContent = breakdownText(value).replace(/\n/g, " · ");
    detail.appendChild(td);
    row.after(detail);
  });
  return row;
}

function renderSheet() {
  const root = $("#sheet");
  root.replaceChildren();
  const groups = new Map();
  for (const [field, value] of Object.entries(state.sheet.values || {})) {
    const group = groupOf(field);
    if (!groups.has(group)) {
      const section = document.createElement("div");
      section.className = "group";
      section.dataset.group = group;
      const title = document.createElement("h2");
      title.textContent = group;
      const table = document.createElement("table");
      section.append(title, table);
      root.appendChild(section);
      groups.set(group, table);
    }
    groups.get(group).appendChild(renderRow(field, value));
  }
  for (const part of ["issues", "competing", "errors"]) renderPart(part);
  renderActions();
  renderChoices();
  const hp = Object.keys(state.sheet.values || {}).find((f) => f.endsWith(":hp.current"));
  $("#damage-box").hidden = !hp;
}

// The character's actions as computeSheet lists them, one button each.
function renderActions() {
  const box = document.querySelector("#actions .buttons");
  box.replaceChildren();
  for (const action of state.sheet.actions || []) {
    const button = document.createElement("button");
    const local = action.id.includes(":") ? action.id.slice(action.id.indexOf(":") + 1) : action.id;
    button.textContent = action.entry ? `${local} (${action.entry})` : local;
    button.addEventListener("click", () => runAction(action));
    box.appendChild(button);
  }
}

function describe(result) {
  const lines = [];
  for (const entry of result.log || []) {
    const faces = entry.faces ? ` faces ${JSON.stringify(entry.faces)}` : "";
    const total = entry.total !== undefined ? ` total ${entry.total}` : "";
    const band = entry.band ? ` → ${entry.band}` : "";
    const picked = entry.picked ? ` picked ${entry.picked}` : "";
    lines.push(`${entry.step}${faces}${total}${band}${picked}`);
  }
  if (result.status === "finished") {
    lines.push(`outcome: ${JSON.stringify(result.outcome)}`);
    for (const proposed of result.proposedChanges || []) {
      lines.push(`proposed for ${proposed.to}: ${JSON.stringify(proposed.change)}`);
    }
  }
  return lines.join("\n");
}

// Runs an action: the engine rolls the dice; a pause for a choice shows its options, and the
// answer continues the action from its state.
async function runAction(action) {
  const log = $("#action-log");
  try {
    const input = { action: { id: action.id } };
    if (action.entry) input.action.entry = action.entry;
    if (action.source) input.action.source = action.source;
    let answer = await call("POST", `/api/characters/${encodeURIComponent(state.id)}/actions`, input);
    showResult(answer.result);
  } catch (error) {
    log.textContent = error.message;
  }
}

function showResult(result) {
  const log = $("#action-log");
  log.textContent = describe(result);
  if (result.status !== "paused") return;
  const needs = result.needs || {};
  const options = needs.options || [];
  const box = document.createElement("div");
  box.className = "pause-options";
  const pick = async (answer) => {
    try {
      const next = await call("POST", `/api/characters/${encodeURIComponent(state.id)}/actions/continue`,
        { state: result.state, answer });
      showResult(next.result);
    } catch (error) {
      log.textContent = error.message;
    }
  };
  if (options.length) {
    for (const option of options) {
      const id = typeof option === "string" ? option : option.id || option.option;
      const button = document.createElement("button");
      button.textContent = id;
      button.addEventListener("click", () => pick({ option: id }));
      box.appendChild(button);
    }
  } else {
    const note = document.createElement("span");
    note.textContent = `paused: ${needs.kind || "waiting"}`;
    box.appendChild(note);
  }
  log.appendChild(box);
}

$("#damage").addEventListener("submit", async (event) => {
  event.preventDefault();
  const amount = Number($("#damage-amount").value);
  const type = $("#damage-type").value;
  if (!(amount > 0)) return;
  try {
    await call("POST", `/api/characters/${encodeURIComponent(state.id)}/changes`, {
      revision: state.revision,
      changes: [{ type: "adjust", field: "hp.current", by: String(-amount), tags: ["damage", `damage.${type}`] }],
    });
  } catch (error) {
    status(error.message, true);
    if (error.status === 409) await open(state.id);
  }
});

// Every choice of the sheet (pending ones first), each with a button listing its options.
function renderChoices() {
  const list = document.querySelector("#choices ul");
  list.replaceChildren();
  const pending = (state.sheet.pending || []).map((p) => ({ ...p, pending: true }));
  const made = (state.sheet.choices || []).filter(
    (c) => !pending.some((p) => JSON.stringify(p.path) === JSON.stringify(c.path)));
  for (const choice of [...pending, ...made]) {
    const li = document.createElement("li");
    const picks = (choice.picks || []).join(", ") || "none";
    const label = (choice.path.choice || []).slice(-1)[0] || choice.id;
    li.textContent = `${label}${choice.pending ? " (pending)" : ""}: ${picks} `;
    const button = document.createElement("button");
    button.textContent = "options";
    button.dataset.choice = label;
    button.addEventListener("click", () => listOptions(choice));
    li.appendChild(button);
    list.appendChild(li);
  }
}

// A choice's options from listOptions: eligible or why not, and what each pick would change.
async function listOptions(choice) {
  const box = $("#option-list");
  try {
    const answer = await call("POST", `/api/characters/${encodeURIComponent(state.id)}/options`, { path: choice.path });
    const listed = answer.options;
    const table = document.createElement("table");
    for (const option of listed.options || []) {
      const id = typeof option.option === "string" ? option.option : JSON.stringify(option.option);
      const row = document.createElement("tr");
      row.className = option.picked ? "picked" : "";
      row.dataset.option = id;
      const name = document.createElement("td");
      name.textContent = id;
      const what = document.createElement("td");
      what.className = "would";
      what.textContent = ((option.changes && option.changes.values) || [])
        .map((v) => `${v.field.replace(/^[^:]*:/, "")} ${show(v.before && v.before.value)} → ${show(v.after && v.after.value)}`)
        .join("; ");
      const reasons = document.createElement("td");
      reasons.className = "reasons";
      reasons.textContent = (option.reasons || []).map((r) => r.code || show(r)).join(", ");
      const act = document.createElement("td");
      if (option.eligible && !option.picked) {
        const pick = document.createElement("button");
        pick.textContent = "pick";
        pick.addEventListener("click", () => choose(listed, id));
        act.appendChild(pick);
      }
      row.append(name, what, reasons, act);
      table.appendChild(row);
    }
    box.replaceChildren(table);
  } catch (error) {
    box.textContent = error.message;
  }
}

// Picks `option` with applyChanges: in a full choice the last pick gives way, as listOptions'
// trial made it.
async function choose(listed, option) {
  const quote = (id) => `'${String(id).replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  const changes = [];
  const picks = listed.picks || [];
  if (listed.max !== undefined && picks.length >= listed.max && picks.length) {
    const last = picks[picks.length - 1];
    changes.push({ type: "unchoose", path: listed.path, option: quote(typeof last === "string" ? last : last.option) });
  }
  changes.push({ type: "choose", path: listed.path, option: quote(option) });
  try {
    await call("POST", `/api/characters/${encodeURIComponent(state.id)}/changes`, { revision: state.revision, changes });
    $("#option-list").replaceChildren();
  } catch (error) {
    status(error.message, true);
    if (error.status === 409) await open(state.id);
  }
}

// Competing options (EC "Competing options"): each group's options as buttons, the applied one
// marked; a pick is saved in the file's `competing` in place of the group's other options.
function renderCompeting() {
  const list = document.querySelector("#competing ul");
  list.replaceChildren();
  for (const group of state.sheet.competing || []) {
    const li = document.createElement("li");
    li.textContent = `${group.field.replace(/^[^:]*:/, "")} (${group.op}): `;
    for (const option of group.options || []) {
      const button = document.createElement("button");
      button.textContent = `${option.id.replace(/^[^:]*:/, "")} = ${show(option.value)}`;
      button.dataset.option = option.id;
      if (option.id === group.applied) button.className = "applied";
      button.addEventListener("click", () => pickCompeting(group, option.id));
      li.appendChild(button);
    }
    list.appendChild(li);
  }
}

async function pickCompeting(group, id) {
  try {
    const path = `/api/characters/${encodeURIComponent(state.id)}`;
    const stored = await call("GET", path);
    const character = stored.character;
    const others = new Set((group.options || []).map((o) => o.id));
    character.competing = (character.competing || []).filter((c) => !others.has(c));
    character.competing.push(id);
    await call("PUT", path, { revision: stored.revision, character });
  } catch (error) {
    status(error.message, true);
    if (error.status === 409) await open(state.id);
  }
}

function renderPart(part) {
  if (part === "choices" || part === "pending") { renderChoices(); return; }
  if (part === "competing") { renderCompeting(); return; }
  const list = document.querySelector(`#${part} ul`);
  if (!list) return;
  list.replaceChildren();
  for (const item of state.sheet[part] || []) {
    const li = document.createElement("li");
    li.textContent = item.code
      ? `${item.code}: ${item.message || show(item.data)}`
      : `${item.field}: ${(item.options || []).map((o) => o.id).join(" / ")}`;
    list.appendChild(li);
  }
}

// Applies one `changed` event: only its fields' rows and its parts are rendered again.
function applyChanges(event) {
  state.revision = event.revision;
  if (event.inputs) state.inputs = event.inputs;
  let missing = false;
  for (const [field, value] of Object.entries(event.values || {})) {
    state.sheet.values[field] = value;
    const old = document.getElementById(rowId(field));
    if (!old) { missing = true; continue; }
    const next = old.nextElementSibling;
    if (next && next.classList.contains("breakdown")) next.remove();
    const row = renderRow(field, value);
    row.classList.add("changed");
    old.replaceWith(row);
  }
  for (const field of event.removed || []) {
    delete state.sheet.values[field];
    const old = document.getElementById(rowId(field));
    if (old) old.remove();
  }
  for (const [part, value] of Object.entries(event.parts || {})) {
    state.sheet[part] = value;
    renderPart(part);
    if (part === "actions") renderActions();
  }
  if (missing) renderSheet();
  status(`revision ${state.revision}`);
}

async function edit(field, box) {
  const text = box.value.trim();
  let value = text === "" ? null : Number.isNaN(Number(text)) ? text : Number(text);
  if (text === "true" || text === "false") value = text === "true";
  try {
    const answer = await call("PUT", `/api/characters/${encodeURIComponent(state.id)}/values/${encodeURIComponent(field)}`,
      { revision: state.revision, value });
    box.classList.remove("refused");
    // The pushed event re-renders the rows; the answer's revision is the same.
    state.revision = Math.max(state.revision, answer.revision);
  } catch (error) {
    box.classList.add("refused");
    status(error.message, true);
    if (error.status === 409) await open(state.id);
  }
}

function subscribe(id) {
  if (state.events) state.events.close();
  const events = new EventSource(`/api/characters/${encodeURIComponent(id)}/events`);
  events.addEventListener("sheet", (e) => {
    const data = JSON.parse(e.data);
    state.revision = data.revision;
    state.sheet = data.sheet;
    state.inputs = data.inputs || {};
    renderSheet();
    status(`revision ${state.revision}`);
  });
  events.addEventListener("changed", (e) => applyChanges(JSON.parse(e.data)));
  events.addEventListener("resync", () => open(id));
  events.onerror = () => status("reconnecting…", true);
  state.events = events;
}

async function open(id) {
  state.id = id;
  const data = await call("GET", `/api/characters/${encodeURIComponent(id)}/sheet`);
  state.revision = data.revision;
  state.sheet = data.sheet;
  state.inputs = data.inputs || {};
  renderSheet();
  status(`revision ${state.revision}`);
}

async function listCharacters(select) {
  const list = await call("GET", "/api/characters");
  const picker = $("#characters");
  picker.replaceChildren();
  for (const c of list) {
    const option = document.createElement("option");
    option.value = c.id;
    option.textContent = c.id;
    picker.appendChild(option);
  }
  const wanted = select || new URLSearchParams(location.search).get("character") || (list[0] && list[0].id);
  if (wanted) {
    picker.value = wanted;
    subscribe(wanted);
    state.id = wanted;
  }
}

$("#characters").addEventListener("change", (e) => { state.id = e.target.value; subscribe(e.target.value); });
$("#upload").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  try {
    const text = await file.text();
    const made = await call("POST", "/api/characters", { character: text });
    await listCharacters(made.id);
  } catch (error) {
    status(error.message, true);
  }
});
// Logging in: the service answers 401 until the browser holds a session cookie (HttpOnly, so this
// script never sees it); the open service (no accounts, loopback) needs none.
function showLogin() {
  $("#login").hidden = false;
  $("main").hidden = true;
  $("#logout").hidden = true;
  if (state.events) state.events.close();
}

$("#login").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    await call("POST", "/api/login", { user: $("#login-user").value, password: $("#login-password").value });
    $("#login-password").value = "";
    $("#login-error").textContent = "";
    await start();
  } catch (error) {
    $("#login-error").textContent = error.message;
  }
});

$("#logout").addEventListener("click", async () => {
  await call("POST", "/api/logout").catch(() => {});
  showLogin();
});

async function start() {
  const me = await call("GET", "/api/me");
  $("#login").hidden = true;
  $("main").hidden = false;
  $("#who").textContent = me.open ? "open (no accounts)" : `${me.user} (${me.role})`;
  $("#logout").hidden = me.open;
  await listCharacters();
}

start().catch((error) => { if (error.status !== 401) status(error.message, true); });
