"""Property tests: the Verdant rules against the naive reference, over random games.

Random games with 1–5 players in every variant are played with the real rules: each
seat decision is built step by step from ``rules.legal_steps`` and every chance event
is drawn from ``chance_outcomes`` with a seeded generator. The same trajectory, with
every decision in the JSON wire format (the real codec's output), is fed to
``tests/verdant_reference.py``, written from the spec alone, which must

- expect the same actor at every point and offer the same draws (same multiset),
- accept every decision the rules accepted and see the same public state (homes,
  market, thumbs, decks, discards, bag, pots, objectives) before every turn decision,
- end with the same breakdowns, totals and places (V8).

Decisions are also mutated (wrong token column, occupied spot, thumbs run out, a second
split, storing twice, …): both engines must refuse the ones that break a rule and
agree, accept or refuse, on every random mutation. And before each step of some
decisions, every candidate step (each pick, place, grow, use near the home, …) is in
``legal_steps`` exactly when the reference and ``advance`` accept it.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from verdant_reference import Reference, RefIllegal

from protocol.messages import ProtocolViolation
from referee.errors import IllegalDecision
from referee.games.base import CHANCE, GameSettings
from referee.games.verdant import codec, rules
from referee.games.verdant.game import VerdantGame
from referee.games.verdant.state import VerdantState
from referee.games.verdant.steps import REVEALING, Decision, Pick, Reveal, Setup, Step

GAME = VerdantGame()
VARIANTS = ("standard", "simplified", "advanced")
Wire = list[dict[str, Any]]

# How often a random decision takes each kind of step when it may: rare thumb actions
# keep the turns moving, frequent token steps exercise §4.4 and V5. A "grower" favours
# plants and nurture so that plants complete often and the pots run out.
STEP_WEIGHTS = {
    "ReplaceCards": 0.6,
    "ReplaceTokens": 0.6,
    "Split": 0.6,
    "Grow": 0.5,
    "Pick": 1.0,
    "Place": 1.0,
    "Store": 1.0,
    "Use": 1.5,
    "Discard": 0.5,
}
GROWER_WEIGHTS = {**STEP_WEIGHTS, "Grow": 3.0, "Store": 0.2, "Use": 6.0, "Discard": 0.1}


# --- random games with the real rules --------------------------------------------------


def random_decision(state: VerdantState, rng: random.Random, *, grower: bool = False) -> Decision:
    """A legal decision built step by step from ``legal_steps``."""
    options = rules.legal_steps(state)
    if options and all(isinstance(step, Setup) for step in options):
        return (rng.choice(options),)
    weights = GROWER_WEIGHTS if grower else STEP_WEIGHTS
    steps: list[Step] = []
    current = state
    while True:
        by_kind = rules.steps_by_kind(current)
        if rules.can_finish(current) and (not by_kind or rng.random() < 0.35):
            return tuple(steps)
        assert by_kind, f"no legal step and the turn cannot end after {steps}"
        kinds = list(by_kind)
        kind = rng.choices(kinds, [weights[k] for k in kinds])[0]
        choices = by_kind[kind]
        plants: list[Step] = [s for s in choices if isinstance(s, Pick) and s.kind == "plant"]
        if grower and plants and rng.random() < 0.7:
            choices = plants
        step = rng.choice(choices)
        steps.append(step)
        if isinstance(step, REVEALING):
            return tuple(steps)
        current = rules.advance(current, step)


@dataclass(frozen=True)
class Moment:
    """One point of a game: the state before ``actor``'s ``decision``."""

    state: VerdantState
    actor: int
    decision: Decision


def random_game(players: int, variant: str, seed: int) -> Iterator[Moment]:
    """Every moment of one random game; the caller sees each state before it moves on.
    Odd seeds play as growers."""
    rng = random.Random(seed)
    state = GAME.start(GameSettings(players=players, seed=seed, options={"variant": variant}))
    while (actor := GAME.to_decide(state)) is not None:
        if actor == CHANCE:
            decision = rng.choice(list(GAME.chance_outcomes(state)))
        else:
            decision = random_decision(state, rng, grower=seed % 2 == 1)
        yield Moment(state, actor, decision)
        state = GAME.apply(state, actor, decision)
    yield Moment(state, CHANCE, ())  # the final state; nobody decides


def revealed_id(decision: Decision) -> str:
    """The id a chance decision reveals."""
    (reveal,) = decision
    assert isinstance(reveal, Reveal)
    return reveal.id


def wire_of(decision: Decision) -> Wire:
    """The decision as a bot sends it: plain JSON from the real codec."""
    wire: Wire = json.loads(msgspec.json.encode(codec.encode_actions(decision)))
    return wire


@dataclass(frozen=True)
class Refused:
    """How the real referee refused a decision: ``rules`` is False when the codec did."""

    reason: str
    index: int | None
    rules: bool


def real_refusal(state: VerdantState, seat: int, wire: Wire) -> Refused | None:
    """Why the real referee refuses the wire decision (decoding included), or None."""
    try:
        decision = codec.decode_actions(msgspec.Raw(json.dumps(wire).encode()))
    except ProtocolViolation as refused:
        return Refused(str(refused), None, rules=False)
    try:
        GAME.apply(state, seat, decision)
    except IllegalDecision as refused:
        return Refused(str(refused), refused.index, rules=True)
    return None


# --- the public state, as each engine shows it -----------------------------------------


def public_of_view(view: dict[str, Any]) -> dict[str, Any]:
    def card(c: dict[str, Any]) -> tuple[Any, ...]:
        return (
            c["id"],
            c.get("verdancy", 0),
            c.get("complete", False),
            c.get("pot"),
            c.get("item"),
        )

    return {
        "homes": [
            {
                "thumbs": home["thumbs"],
                "storage": home["storage"],
                "cards": {tuple(c["at"]): card(c) for c in home["cards"]},
            }
            for home in view["homes"]
        ],
        "market": [
            (m["plant"], m["plant_thumbs"], m["token"], m["room"], m["room_thumbs"])
            for m in view["market"]
        ],
        "decks": (view["decks"]["plants"], view["decks"]["rooms"]),
        "discards": (sorted(view["discards"]["plants"]), sorted(view["discards"]["rooms"])),
        "bag": view["bag"],
        "pots": (view["pots"]["3"], view["pots"]["2"], view["pots"]["1"]),
        "objectives": list(view["objectives"]),
    }


def public_of_reference(reference: Reference) -> dict[str, Any]:
    table = reference.table
    return {
        "homes": [
            {
                "thumbs": player.thumbs,
                "storage": player.storage,
                "cards": {
                    at: (spot.card, spot.verdancy, spot.complete, spot.pot, spot.item)
                    for at, spot in player.home.items()
                },
            }
            for player in table.seats
        ],
        "market": [(c.plant, c.plant_thumbs, c.token, c.room, c.room_thumbs) for c in table.market],
        "decks": (len(table.decks["plant"]), len(table.decks["room"])),
        "discards": (sorted(table.discards["plant"]), sorted(table.discards["room"])),
        "bag": {kind: count for kind, count in table.bag.items() if count},
        "pots": (table.pots[3], table.pots[2], table.pots[1]),
        "objectives": list(table.objectives),
    }


def view_json(state: VerdantState, seat: int) -> dict[str, Any]:
    view: dict[str, Any] = json.loads(
        msgspec.json.encode(codec.encode_view(GAME.view(state, seat)))
    )
    return view


# --- mutations ---------------------------------------------------------------------------

Mutation = Callable[[Wire, Reference, int, random.Random], Wire | None]


def _at(wire: Wire, kind: str) -> int | None:
    return next((i for i, step in enumerate(wire) if step["type"] == kind), None)


def _own_spot(reference: Reference, seat: int, rng: random.Random) -> list[int]:
    return list(rng.choice(sorted(reference.table.seats[seat].home)))


def wrong_token_column(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.1c: the token of another column without a split (in this decision or before)."""
    i = _at(wire, "pick")
    if i is None or _at(wire, "split") is not None or ref.table.turn.split:
        return None
    column = wire[i]["column"]
    return [
        *wire[:i],
        {**wire[i], "token_column": (column + rng.randint(1, 3)) % 4},
        *wire[i + 1 :],
    ]


def occupied_spot(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.3: the card goes onto one of the seat's own cards."""
    i = _at(wire, "place")
    if i is None:
        return None
    return [*wire[:i], {"type": "place", "at": _own_spot(ref, seat, rng)}, *wire[i + 1 :]]


def thumbs_run_out(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.1: one 1d more than the seat's thumbs pay for."""
    grows = ref.table.seats[seat].thumbs // 2 + 1
    return [{"type": "grow", "plant": [0, 0]}] * grows + wire


def split_twice(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.1c: once a turn."""
    return [{"type": "split"}, {"type": "split"}, *wire]


def store_twice(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """V5: a token stored over another cannot be stored again (nor the taken one twice)."""
    if _at(wire, "place") is None:
        return None
    return [*wire, {"type": "store"}, {"type": "store"}]


def stored_token_twice(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.4: the stored token has one fate."""
    if _at(wire, "place") is None:
        return None
    return [*wire, {"type": "discard", "token": "stored"}, {"type": "discard", "token": "stored"}]


def discard_then_use(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.4: a discarded token has left the game."""
    if _at(wire, "place") is None:
        return None
    use = {"type": "use", "token": "taken", "at": [_own_spot(ref, seat, rng)]}
    return [*wire, {"type": "discard", "token": "taken"}, use]


def no_place(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4: a decision that reveals nothing must place its card."""
    i = _at(wire, "place")
    return None if i is None else wire[:i]


def token_before_place(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.4 comes after §4.3."""
    i = _at(wire, "place")
    if i is None:
        return None
    return [*wire[:i], {"type": "discard", "token": "taken"}, *wire[i:]]


def replace_after_pick(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.1: 1b only before the pick."""
    i = _at(wire, "place")
    if i is None:
        return None
    return [*wire[: i + 1], {"type": "replace_tokens", "columns": [0]}, *wire[i + 1 :]]


def replace_thumbed(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.1a: cards that carry thumbs stay."""
    thumbed = [
        {"column": column, "kind": kind}
        for column, slot in enumerate(ref.table.market)
        for kind in ("plant", "room")
        if getattr(slot, f"{kind}_thumbs") > 0
    ]
    return [{"type": "replace_cards", "cards": [rng.choice(thumbed)]}] if thumbed else None


def second_pick(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    """§4.2: one pick a turn."""
    i = _at(wire, "pick")
    return None if i is None else [*wire, wire[i]]


MUST_REFUSE: tuple[Mutation, ...] = (
    wrong_token_column,
    occupied_spot,
    thumbs_run_out,
    split_twice,
    store_twice,
    stored_token_twice,
    discard_then_use,
    no_place,
    token_before_place,
    replace_after_pick,
    replace_thumbed,
    second_pick,
)


def place_anywhere(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    i = _at(wire, "place")
    if i is None:
        return None
    at = [rng.randint(-5, 5), rng.randint(-3, 3)]
    return [*wire[:i], {"type": "place", "at": at}, *wire[i + 1 :]]


def pick_anything(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    i = _at(wire, "pick")
    if i is None:
        return None
    pick = {"type": "pick", "column": rng.randrange(4), "kind": rng.choice(("plant", "room"))}
    if rng.random() < 0.5:
        pick["token_column"] = rng.randrange(4)
    return [*wire[:i], pick, *wire[i + 1 :]]


def use_anything(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    if _at(wire, "place") is None:
        return None
    spots = [_own_spot(ref, seat, rng) for _ in range(rng.randint(1, 3))]
    token = rng.choice(("taken", "stored"))
    extra: Wire = [{"type": "store"}] if rng.random() < 0.4 else []
    return [*wire, *extra, {"type": "use", "token": token, "at": spots}]


def grow_anywhere(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    i = rng.randint(0, len(wire))
    return [*wire[:i], {"type": "grow", "plant": _own_spot(ref, seat, rng)}, *wire[i:]]


def replace_anything(wire: Wire, ref: Reference, seat: int, rng: random.Random) -> Wire | None:
    cards = [
        {"column": rng.randrange(4), "kind": rng.choice(("plant", "room"))}
        for _ in range(rng.randint(1, 3))
    ]
    return [{"type": "replace_cards", "cards": cards}, *wire]


MAY_BE_LEGAL: tuple[Mutation, ...] = (
    place_anywhere,
    pick_anything,
    use_anything,
    grow_anywhere,
    replace_anything,
)


# --- legal_steps, step by step --------------------------------------------------------------


def step_key(step: dict[str, Any]) -> str:
    """One spelling per step: a pick's own column as token column is the default, and
    the order inside a list of cards, columns or spots does not matter."""
    step = dict(step)
    if step["type"] == "pick" and step.get("token_column") in (None, step["column"]):
        step.pop("token_column", None)
    if step["type"] == "use":
        step["at"] = sorted(step["at"])
    if step["type"] == "replace_cards":
        step["cards"] = sorted(step["cards"], key=lambda c: (c["column"], c["kind"]))
    if step["type"] == "replace_tokens":
        step["columns"] = sorted(step["columns"])
    return json.dumps(step, sort_keys=True)


def candidate_steps(reference: Reference, seat: int, rng: random.Random) -> Wire:
    """Steps to try next: every pick, place and grow near the home, the token steps, and
    a sample of the thumb actions and multi-spot uses."""
    home = sorted(reference.table.seats[seat].home)
    xs, ys = [x for x, _ in home], [y for _, y in home]
    spots = [
        [x, y] for x in range(min(xs) - 1, max(xs) + 2) for y in range(min(ys) - 1, max(ys) + 2)
    ]
    steps: Wire = [{"type": "split"}, {"type": "store"}]
    steps += [{"type": "discard", "token": token} for token in ("taken", "stored")]
    steps += [{"type": "replace_tokens", "columns": [c]} for c in range(4)]
    steps.append({"type": "replace_tokens", "columns": [3, 1, 0, 2]})
    cards = [{"column": c, "kind": k} for c in range(4) for k in ("plant", "room")]
    steps += [{"type": "replace_cards", "cards": [card]} for card in cards]
    steps.append({"type": "replace_cards", "cards": rng.sample(cards, 3)})
    for column in range(4):
        for kind in ("plant", "room"):
            steps.append({"type": "pick", "column": column, "kind": kind})
            steps += [
                {"type": "pick", "column": column, "kind": kind, "token_column": token}
                for token in range(4)
            ]
    steps += [{"type": "place", "at": at} for at in spots]
    steps += [{"type": "grow", "plant": at} for at in spots]
    for token in ("taken", "stored"):
        steps += [{"type": "use", "token": token, "at": [at]} for at in spots]
        for size in (2, 3, 4):
            if len(home) >= size:
                steps.append({"type": "use", "token": token, "at": rng.sample(home, size)})
        steps.append({"type": "use", "token": token, "at": [list(home[0]), list(home[0])]})
    return steps


def check_legal_steps(
    state: VerdantState, reference: Reference, seat: int, decision: Decision, rng: random.Random
) -> None:
    """Before each step of ``decision``: a candidate is in ``legal_steps`` exactly when the
    reference accepts the steps so far followed by it, and exactly when ``advance`` does."""
    current = state
    for taken in range(len(decision)):
        prefix = wire_of(decision[:taken])
        listed = {step_key(step) for step in wire_of(rules.legal_steps(current))}
        for candidate in candidate_steps(reference, seat, rng):
            in_list = step_key(candidate) in listed
            ref = reference.refusal(seat, [*prefix, candidate], partial=True)
            (engine_step,) = codec.decode_actions(msgspec.Raw(json.dumps([candidate]).encode()))
            try:
                rules.advance(current, engine_step)
                advanced: str | None = None
            except IllegalDecision as refused:
                advanced = str(refused)
            case = f"seat {seat} after {prefix}: {candidate}\n  listed: {in_list}\n  "
            case += f"advance: {advanced}\n  reference: {ref}"
            assert in_list == (ref is None) == (advanced is None), case
        if isinstance(decision[taken], REVEALING):
            return
        current = rules.advance(current, decision[taken])


# --- the properties ------------------------------------------------------------------------


def check_game(
    players: int, variant: str, seed: int, *, mutate: bool = False, steps: float = 0.0
) -> None:
    """Play one random game with both engines; ``steps``: the share of turn decisions
    whose every step is also checked against ``legal_steps``."""
    reference = Reference(players, variant)
    rng = random.Random(seed ^ 0x5EED)
    state: VerdantState | None = None
    for moment in random_game(players, variant, seed):
        state, actor = moment.state, moment.actor
        expected = GAME.to_decide(state)
        assert reference.to_decide() == expected, (reference.request, expected)
        if expected is None:
            break
        if actor == CHANCE:
            outcomes = Counter(revealed_id(outcome) for outcome in GAME.chance_outcomes(state))
            assert outcomes == reference.chance_candidates(), reference.request
            reference.chance(revealed_id(moment.decision))
            continue
        wire = wire_of(moment.decision)
        assert codec.decode_actions(msgspec.Raw(json.dumps(wire).encode())) == moment.decision
        view = view_json(state, actor)
        if view["phase"] == "turn":
            assert public_of_view(view) == public_of_reference(reference)
        if mutate:
            check_mutations(state, reference, actor, wire, rng)
        if view["phase"] == "turn" and rng.random() < steps:
            check_legal_steps(state, reference, actor, moment.decision, rng)
        refused = reference.refusal(actor, wire)
        assert refused is None, f"reference refuses seat {actor}'s {wire}: {refused}"
        reference.decide(actor, wire)
    assert state is not None
    outcome = GAME.outcome(state)
    assert outcome is not None
    final = reference.final()
    assert public_of_view(view_json(state, 0)) == public_of_reference(reference)
    assert outcome.breakdown == final.breakdowns
    assert outcome.scores == final.totals
    assert outcome.places == final.places


def check_mutations(
    state: VerdantState, reference: Reference, seat: int, wire: Wire, rng: random.Random
) -> None:
    if wire and wire[0]["type"] == "setup":
        bad = [{"type": "setup", "side": "up"}]
        assert real_refusal(state, seat, bad) is not None
        assert reference.refusal(seat, bad) is not None
        return
    for mutation in MUST_REFUSE + MAY_BE_LEGAL:
        mutated = mutation(wire, reference, seat, rng)
        if mutated is None:
            continue
        real = real_refusal(state, seat, mutated)
        ref: RefIllegal | None = reference.refusal(seat, mutated)
        case = f"{mutation.__name__} on seat {seat}: {mutated}\n  real: {real}\n  reference: {ref}"
        if mutation in MUST_REFUSE:
            assert real is not None and ref is not None, case
        assert (real is None) == (ref is None), case
        if real is not None and ref is not None and real.rules:
            assert real.index == ref.index, f"the offending step differs: {case}"


players_st = st.integers(min_value=1, max_value=5)
variant_st = st.sampled_from(VARIANTS)
seed_st = st.integers(min_value=0, max_value=2**32 - 1)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(players=players_st, variant=variant_st, seed=seed_st)
def test_random_games_agree_with_the_reference(players: int, variant: str, seed: int) -> None:
    check_game(players, variant, seed, mutate=False)


@settings(max_examples=8, deadline=None, derandomize=True)
@given(players=players_st, variant=variant_st, seed=seed_st)
def test_mutated_decisions_get_the_same_verdict(players: int, variant: str, seed: int) -> None:
    check_game(players, variant, seed, mutate=True)


@pytest.mark.parametrize(
    ("players", "variant"), [(1, "advanced"), (3, "simplified"), (4, "standard")]
)
def test_legal_steps_agree_with_the_reference(players: int, variant: str) -> None:
    """``legal_steps`` lists exactly the steps the reference (and ``advance``) accept."""
    check_game(players, variant, 77 * players, steps=0.25)


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_size_and_variant(players: int, variant: str) -> None:
    """One fixed game per player count and variant, so none is left to chance."""
    check_game(players, variant, 1000 * players + len(variant), mutate=players in (1, 3))
