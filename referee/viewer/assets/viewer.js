// The replay page, for any game. The referee embeds the game as JSON (#game-data):
// every state the rules reached, already computed, and the game's board view (VIEWS,
// registered by the view's own script) draws one. Text from the record goes into the
// page with textContent only, never as markup.

const data = JSON.parse(document.getElementById("game-data").textContent);
const frames = data.frames;
const seats = data.seats;
let LAST = frames.length - 1; // grows in a live page (live.js)
const PLAY_INTERVAL_MS = 900;

// A new element with its attributes (null and undefined ones left out) and children
// (strings as text, never as markup); svg() is the same in the SVG namespace.
function filled(node, attributes, children) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function el(tag, attributes, ...children) {
  return filled(document.createElement(tag), attributes, children);
}

function byId(id) {
  return document.getElementById(id);
}

function formatClock(ms) {
  if (ms === null || ms === undefined) return "–";
  const tenths = Math.floor(ms / 100);
  const seconds = Math.floor(tenths / 10);
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  const base = (hours ? hours + ":" + String(minutes).padStart(2, "0") : String(minutes)) +
    ":" + String(rest).padStart(2, "0");
  return seconds < 60 ? base + "." + (tenths % 10) : base;
}

function formatSeconds(ms) {
  if (ms === null || ms === undefined) return null;
  return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
}

function actorName(actor) {
  if (actor === -1) return "Chance";
  const seat = seats[actor];
  return seat ? seat.name : "Seat " + (actor + 1);
}

function resultSentence() {
  const result = data.result;
  const places = result.places;
  let sentence;
  if (!places) {
    sentence = "Unfinished";
  } else if (places.length === 1) {
    sentence = "Score " + result.text;
  } else if (places.length === 2 && places[0] === places[1]) {
    sentence = "Draw";
  } else if (places.length === 2) {
    const winner = places[0] < places[1] ? 0 : 1;
    sentence = seats[winner].name + " (" + seats[winner].player + ") won";
  } else {
    sentence = "Places: " + places.map((place, seat) => seats[seat].name + " place " + place)
      .join(", ");
  }
  const parts = [result.text + " — " + sentence];
  if (result.termination) parts.push("termination: " + result.termination);
  if (result.reason) parts.push(result.reason);
  return parts.join(" · ");
}

const view = (VIEWS[data.view] || VIEWS.notation).create(byId("board"), data);

// --- the header -----------------------------------------------------------------

const tags = new Map(data.tags);
const players = seats.map((seat) => seat.player + " (" + seat.name + ")").join(" vs ");
document.title = players + " — " + (tags.get("Game") || data.game) + " replay";
byId("title").textContent = players;
const meta = [];
for (const name of ["Event", "Round", "Date", "GameNumber"]) {
  const value = tags.get(name);
  if (value && value !== "?" && value !== "????.??.??") {
    meta.push((name === "GameNumber" ? "Game " : name === "Round" ? "Round " : "") + value);
  }
}
meta.push((tags.get("Game") || data.game) + (tags.get("TimeControl") ? ", time control " + tags.get("TimeControl") : ""));
byId("meta").textContent = meta.join(" · ");
byId("result").textContent = resultSentence();
for (const link of data.links) {
  byId("links").append(el("a", { href: link.href }, link.text));
}

// --- the seats ------------------------------------------------------------------

const seatRows = seats.map((seat, index) => {
  const figures = el("span", { class: "figures" });
  const move = el("span", { class: "to-move" });
  const row = el(
    "li",
    { "data-seat": index },
    el("span", { class: "seat-name" }, seat.name), ": ",
    el("span", { class: "player" }, seat.player), " ", move,
    el("br"), figures,
  );
  row.style.setProperty("--seat", seat.colour);
  byId("seats").append(row);
  return { row, figures, move };
});

// --- the list of moves ------------------------------------------------------------

const moveButtons = [null];

// The button of frame `index` in the list of moves, added at its end.
function addMoveButton(index) {
  const frame = frames[index];
  const decision = frame.decision;
  const number = frame.step <= 1 ? frame.turn + "." : "";
  // A decision the board view tells in words shows its sentence, its notation as a tooltip.
  const button = el(
    "button",
    { type: "button", "data-frame": index, title: decision.text ? decision.token : null },
    el("span", { class: "turn-number" }, number),
    el("span", { class: "actor" }, actorName(decision.actor)), " ",
    decision.text ? el("span", { class: "sentence" }, decision.text)
      : el("span", { class: "token" }, decision.token),
  );
  button.addEventListener("click", () => go(index));
  byId("moves").append(el("li", {}, button));
  moveButtons.push(button);
}

for (let index = 1; index <= LAST; index += 1) addMoveButton(index);
if (data.broken) {
  byId("moves").append(el("li", { class: "illegal" },
    "Turn " + data.broken.turn + ": " + data.broken.token + " (illegal)"));
}

// --- legend and tags ---------------------------------------------------------------

const legend = view.legend();
if (legend.length) {
  for (const item of legend) byId("legend").append(el("li", {}, item.swatch, el("span", {}, item.text)));
} else {
  byId("legend-section").hidden = true;
}
const tagBody = byId("tags").tBodies[0];
for (const [name, value] of data.tags) {
  tagBody.append(el("tr", {}, el("th", { scope: "row" }, name), el("td", {}, value)));
}

// --- showing a frame ------------------------------------------------------------------

let current = -1;
let timer = null;
let hashFrame = null;
const slider = byId("slider");
slider.max = String(LAST);

// What a decision did, as the page names it: "Seat 2 picks the plant …" when the board
// view tells it in words (decision.text), else the seat and the notation.
function decisionWords(decision) {
  return actorName(decision.actor) + " " + (decision.text || decision.token);
}

function frameTitle(index) {
  const frame = frames[index];
  if (index === 0) return "Start" + (frame.turn >= 1 ? " (before turn " + (frame.turn + 1) + ")" : "");
  const step = frame.last && frame.step === 1 ? "" : " step " + frame.step;
  return "Turn " + frame.turn + step + ": " + decisionWords(frame.decision);
}

function showTitle(index) {
  const label = byId("frame-label");
  label.textContent = frameTitle(index);
  const decision = index > 0 ? frames[index].decision : null;
  if (decision && decision.text) label.append(" ", el("span", { class: "raw" }, decision.token));
}

function showDetail(index) {
  const detail = byId("detail");
  detail.replaceChildren();
  const frame = frames[index];
  if (index === 0) {
    detail.append(el("p", {}, "The position before the first recorded decision."));
    if (data.comment) detail.append(el("p", { class: "comment" }, data.comment));
  } else {
    const decision = frame.decision;
    const took = formatSeconds(decision.elapsed);
    const timing = (took ? " in " + took : "") +
      (decision.clock !== null ? ", " + formatClock(decision.clock) + " left" : "") + ".";
    if (decision.text) {
      detail.append(el("p", { class: "sentence" }, decisionWords(decision) + timing));
      detail.append(el("p", {}, "Notation: ", el("span", { class: "token" }, decision.token)));
    } else {
      detail.append(el("p", {},
        actorName(decision.actor) + " played ", el("span", { class: "token" }, decision.token),
        timing));
    }
    const lines = view.detail(index);
    if (lines.length) detail.append(el("ul", {}, ...lines.map((line) => el("li", {}, ...line))));
    if (decision.comment) detail.append(el("p", { class: "comment" }, "Comment: ", decision.comment));
  }
  if (index === LAST) {
    if (data.broken) {
      detail.append(el("p", { class: "illegal" },
        "Next recorded turn " + data.broken.turn + " (" + data.broken.token + ") is illegal: " +
        data.broken.reason));
    }
    detail.append(el("p", {}, "Result: " + resultSentence()));
  }
}

function showSeats(index) {
  const frame = frames[index];
  seatRows.forEach((seat, number) => {
    const parts = view.seatFigures(index, number);
    parts.push("clock " + formatClock(frame.clocks[number]));
    seat.figures.textContent = parts.join(" · ");
    const moving = frame.toDecide === number;
    seat.move.textContent = moving ? "— to move" : "";
    seat.row.setAttribute("aria-current", moving ? "true" : "false");
  });
}

function hashFor(index) {
  const frame = frames[index];
  if (index === 0) return "#turn=" + frame.turn;
  return frame.last ? "#turn=" + frame.turn : "#turn=" + frame.turn + "&step=" + frame.step;
}

function reveal(button) {
  // Scroll the list only: scrollIntoView would scroll the page away from the board.
  const list = byId("moves");
  const top = button.offsetTop;
  const bottom = top + button.offsetHeight;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight;
}

function go(index) {
  index = Math.max(0, Math.min(LAST, index));
  if (index === current) return;
  current = index;
  view.draw(index);
  showTitle(index);
  slider.value = String(index);
  slider.setAttribute("aria-valuetext", frameTitle(index));
  byId("slider-value").textContent = index + " / " + LAST;
  for (const [number, button] of moveButtons.entries()) {
    if (!button) continue;
    if (number === index) {
      button.setAttribute("aria-current", "step");
      reveal(button);
    } else {
      button.removeAttribute("aria-current");
    }
  }
  showSeats(index);
  showDetail(index);
  byId("first").disabled = byId("prev").disabled = index === 0;
  byId("next").disabled = byId("last").disabled = index === LAST;
  document.body.dataset.frame = String(index);
  const hash = hashFor(index);
  if (location.hash !== hash) {
    hashFrame = index;
    location.replace(hash);
  }
  if (index === LAST) stop();
}

function frameOfHash() {
  const found = /^#turn=(-?\d+)(?:&step=(\d+))?$/.exec(location.hash);
  if (!found) return null;
  const turn = Number(found[1]);
  const step = found[2] === undefined ? null : Number(found[2]);
  if (turn === frames[0].turn && step === null) return 0;
  for (let index = 1; index <= LAST; index += 1) {
    const frame = frames[index];
    if (frame.turn !== turn) continue;
    if (step === null ? frame.last : frame.step === step) return index;
  }
  return null;
}

function play() {
  if (current === LAST) go(0);
  byId("play").setAttribute("aria-pressed", "true");
  byId("play").querySelector(".visually-hidden").textContent = "Pause";
  timer = setInterval(() => go(current + 1), PLAY_INTERVAL_MS);
}

function stop() {
  if (timer !== null) clearInterval(timer);
  timer = null;
  byId("play").setAttribute("aria-pressed", "false");
  byId("play").querySelector(".visually-hidden").textContent = "Play";
}

function toggle() {
  if (timer === null) play();
  else stop();
}

byId("first").addEventListener("click", () => go(0));
byId("prev").addEventListener("click", () => { stop(); go(current - 1); });
byId("next").addEventListener("click", () => { stop(); go(current + 1); });
byId("last").addEventListener("click", () => go(LAST));
byId("play").addEventListener("click", toggle);
slider.addEventListener("input", () => { stop(); go(Number(slider.value)); });
window.addEventListener("hashchange", () => {
  const index = frameOfHash();
  if (index !== null && index !== hashFrame) go(index);
  hashFrame = null;
});
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  const inControl = target instanceof HTMLElement &&
    (target.matches("input, textarea, select") || target.isContentEditable);
  const onButton = target instanceof HTMLElement && target.matches("button, a, summary");
  if (inControl) return; // the slider handles its own arrows, Home and End
  const actions = {
    ArrowLeft: () => { stop(); go(current - 1); },
    ArrowRight: () => { stop(); go(current + 1); },
    Home: () => { stop(); go(0); },
    End: () => go(LAST),
  };
  if (event.key === " " && !onButton) {
    event.preventDefault();
    toggle();
  } else if (actions[event.key]) {
    event.preventDefault();
    actions[event.key]();
  }
});

go(frameOfHash() ?? LAST);
