"""The demo agent's offline encyclopedia: a small fact table and a forgiving lookup over it.

Why bundled and tiny: the demo must run without network access, and its purpose is to give the agent a tool
whose output the reasoning can depend on (so an audit can contradict it), not to be a knowledge base. The entries
cover the demo questions in :data:`ariadne_lc.demo.agent.DEMO_QUESTIONS` and common grade-school science and
unit facts that ARC and GSM8K questions lean on.
"""

from __future__ import annotations

import re

__all__ = ["FACTS", "NO_ENTRY", "lookup_fact"]

NO_ENTRY = "no entry"
"""What the lookup answers when the table has nothing close to the term."""

FACTS: dict[str, str] = {
    # units and time
    "days in a week": "A week has 7 days.",
    "hours in a day": "A day has 24 hours.",
    "minutes in an hour": "An hour has 60 minutes.",
    "seconds in a minute": "A minute has 60 seconds.",
    "days in a year": "A common year has 365 days; a leap year has 366.",
    "months in a year": "A year has 12 months.",
    "weeks in a year": "A year has 52 weeks and 1 or 2 days.",
    "dozen": "A dozen is 12.",
    "muffin": "A muffin is a small baked cake.",
    "temperature": "Temperature measures how hot or cold something is, in degrees Celsius or Fahrenheit; "
    "water freezes at 0 and boils at 100 degrees Celsius at sea level.",
    "centimeters in a meter": "A meter has 100 centimeters.",
    "meters in a kilometer": "A kilometer has 1000 meters.",
    "grams in a kilogram": "A kilogram has 1000 grams.",
    "inches in a foot": "A foot has 12 inches.",
    "feet in a mile": "A mile has 5280 feet.",
    "cents in a dollar": "A dollar has 100 cents.",
    # physical science
    "boiling point of water": "Water boils at 100 degrees Celsius (212 degrees Fahrenheit) at sea level.",
    "freezing point of water": "Water freezes at 0 degrees Celsius (32 degrees Fahrenheit).",
    "speed of light": "Light travels about 300,000 kilometers per second in a vacuum.",
    "speed of sound": "Sound travels about 343 meters per second in air at 20 degrees Celsius.",
    "gravity": "Gravity is the force that pulls objects with mass toward each other; on Earth it pulls "
    "objects down at 9.8 meters per second squared.",
    "friction": "Friction is a force that opposes motion between surfaces in contact and produces heat.",
    "conductor": "A conductor lets heat or electricity pass easily; most metals such as copper are conductors.",
    "insulator": "An insulator slows the flow of heat or electricity; wood, plastic and rubber are insulators.",
    "states of matter": "The common states of matter are solid, liquid and gas.",
    "evaporation": "Evaporation is the change of a liquid into a gas, sped up by heat.",
    "condensation": "Condensation is the change of a gas into a liquid when it cools.",
    "magnet": "A magnet attracts iron and steel; like poles repel and opposite poles attract.",
    # earth and space
    "sun": "The Sun is a star at the center of the solar system; Earth orbits it once a year.",
    "moon": "The Moon orbits Earth about once every 27 days and reflects sunlight.",
    "earth rotation": "Earth rotates on its axis once every 24 hours, which causes day and night.",
    "earth orbit": "Earth orbits the Sun once every 365.25 days, which, with its tilted axis, causes seasons.",
    "planets": "The eight planets from the Sun are Mercury, Venus, Earth, Mars, Jupiter, Saturn, Uranus and Neptune.",
    "largest planet": "Jupiter is the largest planet in the solar system.",
    "water cycle": "In the water cycle water evaporates, condenses into clouds and falls as precipitation.",
    "erosion": "Erosion is the moving of rock and soil by water, wind or ice.",
    "fossil": "A fossil is the preserved remains or trace of an organism from the past.",
    # life science
    "photosynthesis": "Photosynthesis is how plants use sunlight, water and carbon dioxide to make sugar "
    "and release oxygen.",
    "plant needs": "Plants need sunlight, water, air (carbon dioxide) and nutrients to grow.",
    "mammal": "A mammal is a warm-blooded animal with hair that feeds its young with milk.",
    "heart": "The heart pumps blood through the body.",
    "lungs": "The lungs take in oxygen and release carbon dioxide.",
    "cell": "The cell is the basic unit of life.",
    "herbivore": "A herbivore is an animal that eats only plants.",
    "carnivore": "A carnivore is an animal that eats other animals.",
    # general knowledge
    "capital of france": "The capital of France is Paris.",
    "capital of japan": "The capital of Japan is Tokyo.",
    "capital of italy": "The capital of Italy is Rome.",
    "capital of germany": "The capital of Germany is Berlin.",
    "largest ocean": "The Pacific Ocean is the largest ocean on Earth.",
    "tallest mountain": "Mount Everest is the tallest mountain above sea level, 8,849 meters high.",
    "longest river": "The Nile is usually listed as the longest river, about 6,650 kilometers long.",
    "legs of a spider": "A spider has 8 legs.",
    "legs of an insect": "An insect has 6 legs.",
    "legs of a dog": "A dog has 4 legs.",
}
"""Term to fact. Keys are lower case; :func:`lookup_fact` also finds them from close phrasings."""

_STOPWORDS = frozenset(
    {
        *("a", "an", "the", "of", "in", "on", "at", "to", "is", "are", "what", "how", "many", "much"),
        *("does", "do", "which", "who", "for", "per", "one"),
    }
)
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return {w.rstrip("s") if len(w) > 3 else w for w in _WORD.findall(text.lower())} - _STOPWORDS


_INDEX = [(key, _words(key)) for key in FACTS]


def lookup_fact(term: str) -> str:
    """Find the fact for ``term``: exact key first, then the key sharing most content words.

    A key matches only if the term covers at least half of its content words, so unrelated terms get
    :data:`NO_ENTRY` instead of a misleading fact.

    Examples:
        >>> lookup_fact("boiling point of water")
        'Water boils at 100 degrees Celsius (212 degrees Fahrenheit) at sea level.'
        >>> lookup_fact("What is the capital of France?")
        'The capital of France is Paris.'
        >>> lookup_fact("quantum chromodynamics")
        'no entry'
    """
    key = term.strip().strip("\"'`").strip().lower().rstrip("?.!")
    if key in FACTS:
        return FACTS[key]
    wanted = _words(key)
    best_score, best_key = 0.0, None
    for candidate, words in _INDEX:
        if not words:
            continue
        overlap = len(wanted & words)
        score = overlap / len(words) + overlap / (10 * max(len(wanted), 1))
        if overlap and overlap / len(words) >= 0.5 and score > best_score:
            best_score, best_key = score, candidate
    return FACTS[best_key] if best_key is not None else NO_ENTRY
