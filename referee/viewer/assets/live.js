// Live mode of the replay page (referee serve): the page came with the game so far, and
// the server's event stream (data.live.events, docs/spectators.md) brings each new frame,
// computed by the referee as for a finished game. Frames are appended to the same list
// the board view draws from; a spectator at the last position follows the game, one who
// went back stays where they are.

const liveStatus = el("p", { id: "live-status", class: "live-status", role: "status" });
byId("result").after(liveStatus);

function say(...parts) {
  liveStatus.replaceChildren(...parts);
}

function showResult(result) {
  if (!result) return;
  data.result = result;
  byId("result").textContent = resultSentence();
  if (current === LAST) showDetail(LAST);
}

// Append frames computed by the referee (each with its final step; the previous last
// frame stops being the last of its turn when the new one belongs to the same turn).
function appendFrames(added) {
  if (!added.length) return;
  const following = current === LAST;
  for (const frame of added) {
    const previous = frames[frames.length - 1];
    previous.last = previous.turn !== frame.turn;
    frames.push(frame);
    LAST = frames.length - 1;
    addMoveButton(LAST);
  }
  slider.max = String(LAST);
  if (following) {
    go(LAST);
  } else {
    byId("next").disabled = byId("last").disabled = false;
    byId("slider-value").textContent = current + " / " + LAST;
  }
}

// The page no longer matches the game the server has (a game started again, or frames
// missed): load it afresh.
function reload() {
  events.close();
  location.reload();
}

const events = new EventSource(data.live.events);
say("Live: connecting…");

events.addEventListener("open", () => say("Live: following the game as it is played."));
events.addEventListener("error", () => {
  if (events.readyState !== EventSource.CLOSED) say("Live: connection lost, reconnecting…");
});

events.addEventListener("game", (event) => {
  const game = JSON.parse(event.data);
  const known = game.document ? game.document.frames : null;
  if (!known || known.length < frames.length) return reload();
  if (LAST > 0 && known[LAST].decision.token !== frames[LAST].decision.token) return reload();
  appendFrames(known.slice(frames.length));
  showResult(game.document.result);
});

events.addEventListener("frames", (event) => {
  const update = JSON.parse(event.data);
  if (update.from > frames.length) return reload();
  appendFrames(update.frames.slice(frames.length - update.from));
  showResult(update.result);
});

events.addEventListener("finished", (event) => {
  const finished = JSON.parse(event.data);
  events.close();
  say("The game is over: ", el("a", { href: finished.page }, "its replay"), ".");
  document.body.dataset.finished = "true";
});
