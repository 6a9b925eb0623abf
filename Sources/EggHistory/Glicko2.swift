import Foundation

/// Glicko-2 (Mark Glickman, "Example of the Glicko-2 system", 2013): one rating period's update
/// of one player from its games against opponents rated at the period's start.
public struct Glicko2Rating: Sendable, Hashable {
    /// On the Glicko scale (1500 for a new player).
    public var rating: Double
    /// The rating deviation (350 for a new player).
    public var deviation: Double
    public var volatility: Double

    public static let initial = Glicko2Rating(rating: 1500, deviation: 350, volatility: 0.06)

    public init(rating: Double, deviation: Double, volatility: Double) {
        self.rating = rating
        self.deviation = deviation
        self.volatility = volatility
    }
}

public enum Glicko2 {
    /// The Glicko-2 scale factor (173.7178).
    static let scale = 173.7178
    /// The system constant τ, constraining the change of volatility (the paper's example: 0.5).
    public static let defaultTau = 0.5
    static let epsilon = 0.000001

    /// One game in a rating period: the opponent's rating at the period's start, and the score
    /// (1 a win, 0.5 a draw, 0 a loss).
    public struct Outcome: Sendable {
        public var opponent: Glicko2Rating
        public var score: Double
        public init(opponent: Glicko2Rating, score: Double) {
            self.opponent = opponent
            self.score = score
        }
    }

    /// The player's rating after a period with `outcomes` (none: only its deviation grows).
    public static func update(_ player: Glicko2Rating, outcomes: [Outcome], tau: Double = defaultTau) -> Glicko2Rating {
        // Step 2: to the Glicko-2 scale.
        let mu = (player.rating - 1500) / scale
        let phi = player.deviation / scale
        let sigma = player.volatility
        guard !outcomes.isEmpty else {
            // Step 6 alone: a player who did not compete.
            let grown = (phi * phi + sigma * sigma).squareRoot()
            return Glicko2Rating(rating: player.rating, deviation: grown * scale, volatility: sigma)
        }
        func g(_ phi: Double) -> Double { 1 / (1 + 3 * phi * phi / (Double.pi * Double.pi)).squareRoot() }
        var vInverse = 0.0, sum = 0.0
        for outcome in outcomes {
            let muJ = (outcome.opponent.rating - 1500) / scale
            let phiJ = outcome.opponent.deviation / scale
            let gJ = g(phiJ)
            let expected = 1 / (1 + exp(-gJ * (mu - muJ)))
            vInverse += gJ * gJ * expected * (1 - expected)
            sum += gJ * (outcome.score - expected)
        }
        // Step 3: the estimated variance; step 4: the estimated improvement.
        let v = 1 / vInverse
        let delta = v * sum
        // Step 5: the new volatility (the Illinois algorithm).
        let a = log(sigma * sigma)
        func f(_ x: Double) -> Double {
            let ex = exp(x)
            let num = ex * (delta * delta - phi * phi - v - ex)
            let den = 2 * pow(phi * phi + v + ex, 2)
            return num / den - (x - a) / (tau * tau)
        }
        var bigA = a
        var bigB: Double
        if delta * delta > phi * phi + v {
            bigB = log(delta * delta - phi * phi - v)
        } else {
            var k = 1.0
            while f(a - k * tau) < 0 { k += 1 }
            bigB = a - k * tau
        }
        var fA = f(bigA), fB = f(bigB)
        var iterations = 0
        while abs(bigB - bigA) > epsilon && iterations < 1_000 {
            let c = bigA + (bigA - bigB) * fA / (fB - fA)
            let fC = f(c)
            if fC * fB <= 0 {
                bigA = bigB
                fA = fB
            } else {
                fA /= 2
            }
            bigB = c
            fB = fC
            iterations += 1
        }
        let newSigma = exp(bigA / 2)
        // Step 6: the pre-period deviation; step 7: the new deviation and rating.
        let phiStar = (phi * phi + newSigma * newSigma).squareRoot()
        let newPhi = 1 / (1 / (phiStar * phiStar) + 1 / v).squareRoot()
        let newMu = mu + newPhi * newPhi * sum
        // Step 8: back to the Glicko scale.
        return Glicko2Rating(rating: scale * newMu + 1500, deviation: scale * newPhi, volatility: newSigma)
    }
}
