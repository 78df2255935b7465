// The live index of `referee serve` (docs/spectators.md): the games in progress, kept up
// to date from the event stream `events`, above the tournament's own index.html, fetched
// again whenever the standings change. Text goes into the page as text only; the index
// is the referee's own page, parsed inertly (DOMParser runs nothing) and its <main> shown.
(function () {
"use strict";

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
  for (const child of children) {
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

const list = document.getElementById("live-games");
const status = document.getElementById("live-status");
const holder = document.getElementById("site-index");
const games = new Map(); // game number → { item, players, plies }

function number4(game) {
  return String(game).padStart(4, "0");
}

function describe(entry) {
  return ": " + entry.players.join(" – ") + " · " + entry.plies + (entry.plies === 1 ? " move" : " moves");
}

function showCount() {
  status.textContent = games.size ? games.size + (games.size === 1 ? " game" : " games") + " in progress."
    : "No game in progress.";
}

function started(game, players, plies) {
  const known = games.get(game);
  if (known) known.item.remove();
  const text = document.createTextNode("");
  const item = el("li", { "data-game": game },
    el("a", { href: "live/" + number4(game) }, "Game " + game), text);
  const entry = { item, text, players, plies };
  text.textContent = describe(entry);
  const after = [...games.keys()].filter((other) => other > game).sort((a, b) => a - b)[0];
  list.insertBefore(item, after === undefined ? null : games.get(after).item);
  games.set(game, entry);
  showCount();
}

function finished(game) {
  const entry = games.get(game);
  if (entry) entry.item.remove();
  games.delete(game);
  showCount();
}

let fetching = false;
let again = false;
let version = 0;

async function refreshIndex() {
  if (fetching) {
    again = true;
    return;
  }
  fetching = true;
  try {
    do {
      again = false;
      const response = await fetch("index.html", { cache: "no-store" });
      if (!response.ok) {
        holder.replaceChildren(el("p", { class: "note" }, "No game has finished yet."));
        continue;
      }
      // Only its <main>: the head's style sheet, parsed here, would break this page's policy.
      const text = await response.text();
      const from = text.indexOf("<main");
      const to = text.lastIndexOf("</main>");
      const fragment = from >= 0 && to > from ? text.slice(from, to + "</main>".length) : "";
      const main = new DOMParser().parseFromString(fragment, "text/html").querySelector("main");
      if (!main) continue;
      const heading = main.querySelector("h1");
      if (heading) {
        document.getElementById("title").textContent = heading.textContent + " — live";
        document.title = heading.textContent + " — live";
        heading.remove();
      }
      // The static index says it reloads itself; this page updates itself instead.
      for (const note of main.querySelectorAll('section[aria-label="Progress"] .note')) note.remove();
      holder.replaceChildren(...Array.from(main.childNodes, (node) => document.importNode(node, true)));
      version += 1;
      holder.dataset.version = String(version);
    } while (again);
  } catch (error) {
    holder.replaceChildren(el("p", { class: "note" }, "The standings could not be loaded: " + error));
  } finally {
    fetching = false;
  }
}

const events = new EventSource("events");
events.addEventListener("error", () => {
  if (events.readyState !== EventSource.CLOSED) status.textContent = "Connection lost, reconnecting…";
});
events.addEventListener("hello", (event) => {
  const hello = JSON.parse(event.data);
  for (const entry of games.values()) entry.item.remove();
  games.clear();
  for (const game of hello.games) started(game.game, game.players, game.plies);
  showCount();
  refreshIndex();
});
events.addEventListener("game_started", (event) => {
  const game = JSON.parse(event.data);
  started(game.game, game.players, 0);
});
events.addEventListener("turn", (event) => {
  const turn = JSON.parse(event.data);
  const entry = games.get(turn.game);
  if (!entry) return;
  entry.plies = turn.plies;
  entry.text.textContent = describe(entry);
});
events.addEventListener("game_finished", (event) => finished(JSON.parse(event.data).game));
events.addEventListener("standings", () => refreshIndex());
})();
