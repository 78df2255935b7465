// Verdant's board view: the public table as HTML — the market, the piles, every home as
// a grid (north on top, its columns labelled x=…, its rows y=…, as the notation's
// place@x,y) with its score so far. Each card is an element with data-card="P09"
// data-seat data-x data-y, as the referee's replay left it.

VIEWS.verdant = {
  create(container, document_) {
    const frames = document_.frames;
    const catalogue = document_.layout;
    const seatsInfo = document_.seats;
    const LIGHT = { low: "l", medium: "m", bright: "b" };
    const status = el("p", { class: "verdant-status" });
    const market = el("div", { class: "verdant-market", role: "group", "aria-label": "Market" });
    const piles = el("p", { class: "verdant-piles" });
    const homes = el("div", { class: "verdant-homes" });
    const table = el("div", { "data-board": "verdant" }, status, el("h3", {}, "Market"), market,
      piles, el("h3", {}, "Homes"), homes);
    container.append(table);

    function tokenText(id) {
      return id === null ? "no token" : id;
    }

    function plantCard(id, extra) {
      const plant = catalogue.plants[id];
      const lights = plant.lights.map((light) => LIGHT[light]).join("");
      const lines = [id + " " + plant.colour, "light " + lights + " · " + plant.points + " pts"];
      if (extra) lines.push(...extra);
      return cardNode(id, plant.colour, lines,
        id + ": " + plant.colour + " plant, likes " + plant.lights.join(" and ") + " light, needs " +
        plant.needs + " verdancy, " + plant.points + " points" + (extra ? ", " + extra.join(", ") : ""));
    }

    function roomCard(id, extra) {
      const room = catalogue.rooms[id];
      const sides = room.sides.map((light, side) => "NESW"[side] + ":" + LIGHT[light]).join(" ");
      const lines = [id + " " + room.colour, sides];
      if (extra) lines.push(...extra);
      const named = ["north", "east", "south", "west"].map((side, i) => side + " " + room.sides[i]);
      return cardNode(id, room.colour, lines, id + ": " + room.colour + " room, light " +
        named.join(", ") + (extra ? ", " + extra.join(", ") : ""));
    }

    function cardNode(id, colour, lines, label) {
      const node = el("div", { class: "verdant-card colour-" + colour, "data-card": id, title: label });
      for (const line of lines) node.append(el("span", {}, line));
      node.append(el("span", { class: "visually-hidden" }, label));
      return node;
    }

    function drawMarket(state, changed) {
      market.replaceChildren();
      state.market.forEach((column, index) => {
        const cells = el("div", { class: "verdant-column", "data-column": index,
          "data-change": changed.includes(index) ? "market" : null },
        el("span", { class: "column-name" }, "Column " + index));
        cells.append(column.plant === null ? el("span", { class: "empty" }, "no plant")
          : plantCard(column.plant, column.plant_thumbs ? ["+" + column.plant_thumbs + " thumbs"] : null));
        cells.append(el("span", { class: "verdant-token" }, tokenText(column.token)));
        cells.append(column.room === null ? el("span", { class: "empty" }, "no room")
          : roomCard(column.room, column.room_thumbs ? ["+" + column.room_thumbs + " thumbs"] : null));
        market.append(cells);
      });
    }

    function drawHome(state, home, changes) {
      const seat = home.seat;
      const info = seatsInfo[seat];
      const score = state.scores[seat];
      const total = score.reduce((sum, [, value]) => sum + value, 0);
      const section = el("section", { class: "verdant-home", "data-seat": seat,
        "aria-label": info.name + " (" + info.player + ")" });
      section.style.setProperty("--seat", info.colour);
      section.append(el("h4", {}, info.name + ": " + info.player + " — " + total + " points"));
      section.append(el("p", { class: "verdant-score" },
        score.map(([name, value]) => name + " " + value).join(" · ") + " · thumbs " + home.thumbs +
        " · stored " + tokenText(home.storage)));
      const xs = home.cards.map((card) => card.at[0]);
      const ys = home.cards.map((card) => card.at[1]);
      const minX = Math.min(0, ...xs), maxX = Math.max(0, ...xs);
      const minY = Math.min(0, ...ys), maxY = Math.max(0, ...ys);
      // The axes of the notation (place@x,y): x to the east, y to the north, the first
      // plant at 0,0; a label above each column and left of each row.
      const grid = el("div", { class: "verdant-grid" });
      grid.style.setProperty("--columns", String(maxX - minX + 1));
      for (let x = minX; x <= maxX; x += 1) {
        const label = el("span", { class: "axis axis-x", "data-axis": "x", "data-value": x }, "x=" + x);
        label.style.gridColumn = String(x - minX + 2);
        label.style.gridRow = "1";
        grid.append(label);
      }
      for (let y = maxY; y >= minY; y -= 1) {
        const label = el("span", { class: "axis axis-y", "data-axis": "y", "data-value": y }, "y=" + y);
        label.style.gridColumn = "1";
        label.style.gridRow = String(maxY - y + 2);
        grid.append(label);
      }
      const placed = new Set(changes.placed.filter(([s]) => s === seat).map(([, x, y]) => x + "," + y));
      const furnished = new Set(changes.furnished.filter(([s]) => s === seat).map(([, x, y]) => x + "," + y));
      for (const card of home.cards) {
        const extra = [];
        if (card.kind === "plant") {
          extra.push(card.complete ? "complete, pot " + (card.pot ?? "–")
            : "verdancy " + card.verdancy + "/" + catalogue.plants[card.id].needs);
        } else {
          extra.push(card.item === null ? "no item" : card.item);
        }
        const node = card.kind === "plant" ? plantCard(card.id, extra) : roomCard(card.id, extra);
        node.dataset.seat = String(seat);
        node.dataset.x = String(card.at[0]);
        node.dataset.y = String(card.at[1]);
        node.style.gridColumn = String(card.at[0] - minX + 2);
        node.style.gridRow = String(maxY - card.at[1] + 2);
        const where = ", at " + card.at[0] + "," + card.at[1];
        node.title += where;
        node.querySelector(".visually-hidden").textContent += where;
        const key = card.at[0] + "," + card.at[1];
        const marks = [];
        if (placed.has(key)) marks.push("placed");
        if (furnished.has(key)) marks.push("furnished");
        if (marks.length) node.dataset.change = marks.join(" ");
        grid.append(node);
      }
      section.append(grid);
      return section;
    }

    return {
      draw(index) {
        const state = frames[index].state;
        const changes = index > 0 ? frames[index].changes : { placed: [], furnished: [], market: [] };
        const deciding = state.to_decide === null ? "the game is over"
          : state.to_decide === -1 ? "chance deals" : seatsInfo[state.to_decide].name + " decides";
        status.textContent = state.variant + " game, " + state.phase + " phase: " + deciding +
          ". Turns left: " + state.turns_left.join(", ") + ".";
        drawMarket(state, changes.market);
        piles.textContent = "Plant deck " + state.decks.plants + " · room deck " + state.decks.rooms +
          " · bag " + state.bag + " tokens · pots 3: " + state.pots["3"] + ", 2: " + state.pots["2"] +
          ", 1: " + state.pots["1"] + (state.objectives.length ? " · objectives " +
          state.objectives.join(", ") : "");
        homes.replaceChildren(...state.homes.map((home) => drawHome(state, home, changes)));
      },
      detail(index) {
        const changes = frames[index].changes;
        const lines = [];
        if (changes.placed.length) {
          lines.push(["Placed: " + changes.placed.map(([seat, x, y]) =>
            seatsInfo[seat].name + " at " + x + "," + y).join("; ")]);
        }
        if (changes.furnished.length) {
          lines.push(["Token on a room: " + changes.furnished.map(([seat, x, y]) =>
            seatsInfo[seat].name + " at " + x + "," + y).join("; ")]);
        }
        if (changes.market.length) lines.push(["Market columns changed: " + changes.market.join(", ")]);
        return lines;
      },
      seatFigures(index, seat) {
        const state = frames[index].state;
        const total = state.scores[seat].reduce((sum, [, value]) => sum + value, 0);
        return [total + " points", state.turns_left[seat] + " turns left"];
      },
      legend() {
        return [
          { swatch: el("span", { class: "verdant-swatch placed" }), text: "Card placed by this step" },
          { swatch: el("span", { class: "verdant-swatch furnished" }), text: "Token put on a room" },
          { swatch: el("span", { class: "verdant-swatch market" }), text: "Market column changed" },
          { swatch: el("span", { class: "verdant-swatch" }, "l m b"), text: "Light: low, medium, bright" },
        ];
      },
    };
  },
};
