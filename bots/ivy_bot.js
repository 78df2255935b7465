#!/usr/bin/env node
// ivy_bot.js: an Ivy bot in plain Node.js (20+, no dependencies, no SDK).
//
// It speaks the referee's JSON-lines protocol (docs/protocol.md) directly: one JSON
// object per line on stdin and stdout. It answers `new_game` with `ready`, and every
// `turn` request with a turn read off the structured view, without parsing the
// position string: it creeps, again and again, into the highest empty cell next to
// its living vine that its sun can pay for, and passes when nothing fits. It only ever
// creeps, and it counts every cost the way the rules do (one sun per neighbour that is
// its own living cell, the a5-i5 tunnel included, withering branches it touches
// grafted at once), so it never sends an illegal turn.
//
// Run it with: node bots/ivy_bot.js

"use strict";

const readline = require("readline");

// --- the house -----------------------------------------------------------------

const COLUMNS = "abcdefghi";
// For each row, its first and last column (0 = a): the house narrows at the roof.
const ROW_SPANS = {
  1: [0, 8], 2: [0, 8], 3: [0, 8], 4: [0, 8], 5: [0, 8], 6: [0, 8], 7: [0, 8], 8: [0, 8],
  9: [1, 7], 10: [2, 6], 11: [3, 5], 12: [4, 4],
};
const GLASS = new Set(["c6", "c9", "g6", "g9", "e2", "e3"]);
const TUNNEL = { a5: "i5", i5: "a5" };

function cellName(column, row) {
  const span = ROW_SPANS[row];
  if (span === undefined || column < span[0] || column > span[1]) return null;
  return COLUMNS[column] + row;
}

function rowOf(name) {
  return Number(name.slice(1));
}

function columnOf(name) {
  return COLUMNS.indexOf(name[0]);
}

// The neighbours of a cell: left, right, below, above, and the tunnel.
function neighbours(name) {
  const column = columnOf(name);
  const row = rowOf(name);
  const around = [
    cellName(column - 1, row),
    cellName(column + 1, row),
    cellName(column, row - 1),
    cellName(column, row + 1),
    TUNNEL[name] ?? null,
  ];
  return around.filter((other) => other !== null);
}

const ALL_CELLS = [];
for (let row = 1; row <= 12; row += 1) {
  for (let column = ROW_SPANS[row][0]; column <= ROW_SPANS[row][1]; column += 1) {
    ALL_CELLS.push(cellName(column, row));
  }
}

// What a lit leaf in each row adds to its owner's Feed.
function leafIncome(row) {
  if (row >= 9) return 4;
  if (row >= 5) return 2;
  if (row >= 2) return 1;
  return 0;
}

// --- choosing a turn -------------------------------------------------------------

// The turn to play, from a `turn` request's view: a list of creep actions.
function chooseTurn(view) {
  const me = view.to_move;
  const occupied = new Set(GLASS);
  const mine = new Set();
  const withering = new Set();
  let income = 3;
  for (const cell of view.cells) {
    occupied.add(cell.cell);
    if (cell.kind !== "vine") continue;
    if (cell.owner === me) {
      mine.add(cell.cell);
      if (cell.leaf && cell.lit) income += leafIncome(rowOf(cell.cell));
    } else if (cell.owner === null) {
      withering.add(cell.cell);
    }
  }
  let sun = view.sun[me] + income; // the Feed comes first
  const actions = [];
  for (;;) {
    const target = bestCreep(occupied, mine, sun);
    if (target === null) break;
    sun -= target.cost;
    occupied.add(target.cell);
    mine.add(target.cell);
    graft(target.cell, mine, withering);
    actions.push({ type: "creep", cell: target.cell });
  }
  return actions;
}

// The creep to make: the highest affordable empty cell next to our living vine,
// nearest to column e when level. Null when none is affordable.
function bestCreep(occupied, mine, sun) {
  let best = null;
  for (const cell of ALL_CELLS) {
    if (occupied.has(cell)) continue;
    const cost = neighbours(cell).filter((other) => mine.has(other)).length;
    if (cost === 0 || cost > sun) continue;
    const rank = [rowOf(cell), -Math.abs(columnOf(cell) - 4), -cost];
    if (best === null || compareRanks(rank, best.rank) > 0) best = { cell, cost, rank };
  }
  return best;
}

function compareRanks(a, b) {
  for (let i = 0; i < a.length; i += 1) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return 0;
}

// After a creep into `cell`, every withering branch touching it becomes ours (spec §2).
function graft(cell, mine, withering) {
  const queue = neighbours(cell).filter((other) => withering.has(other));
  while (queue.length > 0) {
    const next = queue.pop();
    if (!withering.delete(next)) continue;
    mine.add(next);
    queue.push(...neighbours(next).filter((other) => withering.has(other)));
  }
}

// --- the protocol ----------------------------------------------------------------

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

let logged = false;
const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });

input.on("line", (line) => {
  if (line.trim() === "") return;
  let message;
  try {
    message = JSON.parse(line);
  } catch (error) {
    process.stderr.write(`ivy_bot.js: cannot read a line: ${error.message}\n`);
    return;
  }
  switch (message.type) {
    case "new_game":
      send({ type: "ready", id: message.id, name: "ivy_bot.js", author: "ivy-referee", version: "1.0" });
      break;
    case "turn": {
      const actions = chooseTurn(message.view);
      if (!logged) {
        send({ type: "log", message: "ivy_bot.js: creeping toward the light, highest cell first" });
        logged = true;
      }
      send({ type: "turn", id: message.id, actions });
      break;
    }
    case "error":
      process.stderr.write(`ivy_bot.js: referee says ${message.code}: ${message.message}\n`);
      break;
    case "quit":
      input.close();
      break;
    default:
      break; // game_over and anything unknown need no answer
  }
});
